import type { Command } from 'commander'
import { type Output, UsageError } from './output.ts'

/** One command of the tree: its words after `statusd`, subcommands and long options. */
interface Node {
  path: string[]
  description: string
  subcommands: { name: string; description: string }[]
  options: { flag: string; description: string }[]
}

/** Every command of the tree, the program first, from commander's own description of it. */
function nodesOf(program: Command): Node[] {
  const nodes: Node[] = []
  const walk = (command: Command, path: string[]) => {
    const help = command.createHelp()
    nodes.push({
      path,
      description: command.description(),
      subcommands: help
        .visibleCommands(command)
        .filter((c) => c.name() !== 'help' || path.length === 0)
        .map((c) => ({ name: c.name(), description: c.description() })),
      options: [...help.visibleOptions(command), ...help.visibleGlobalOptions(command)]
        .filter((o) => o.long)
        .map((o) => ({ flag: o.long as string, description: o.description })),
    })
    for (const sub of command.commands) if (sub.name() !== 'help') walk(sub, [...path, sub.name()])
  }
  walk(program, [])
  return nodes
}

/** Single-quoted for any of the three shells: no expansion inside. */
const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

/**
 * bash: the words before the cursor that name subcommands make the path; the candidates are
 * that command's subcommands and options (zsh uses the same two functions).
 */
function shellTables(nodes: Node[], fn: string): string {
  const words = nodes
    .map(
      (n) =>
        `    ${sq(n.path.join(' '))}) echo ${sq([...n.subcommands.map((s) => s.name), ...n.options.map((o) => o.flag)].join(' '))} ;;`,
    )
    .join('\n')
  const subs = nodes
    .flatMap((n) =>
      n.subcommands.map(
        (s) =>
          `    ${sq(`${n.path.join(' ')}/${s.name}`)}) echo ${sq([...n.path, s.name].join(' '))} ;;`,
      ),
    )
    .join('\n')
  return `${fn}_words() {
  case "$1" in
${words}
  esac
}

${fn}_sub() {
  case "$1/$2" in
${subs}
  esac
}`
}

function bash(nodes: Node[]): string {
  return `# statusd completion for bash. Load it in this shell:  source <(statusd completion bash)
# or for every shell: statusd completion bash > ~/.local/share/bash-completion/completions/statusd
${shellTables(nodes, '_statusd')}

_statusd() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" next i
  for ((i = 1; i < COMP_CWORD; i++)); do
    next="$(_statusd_sub "$path" "\${COMP_WORDS[i]}")"
    [[ -n "$next" ]] && path="$next"
  done
  COMPREPLY=($(compgen -W "$(_statusd_words "$path")" -- "$cur"))
}
complete -o default -F _statusd statusd
`
}

function zsh(nodes: Node[]): string {
  return `#compdef statusd
# statusd completion for zsh. Load it in this shell:  source <(statusd completion zsh)
# or save it as _statusd in a directory of $fpath, e.g. statusd completion zsh > ~/.zfunc/_statusd
${shellTables(nodes, '_statusd')}

_statusd() {
  # note: not "path", which zsh ties to PATH
  local cmdpath="" next i
  for ((i = 2; i < CURRENT; i++)); do
    next="$(_statusd_sub "$cmdpath" "\${words[i]}")"
    [[ -n "$next" ]] && cmdpath="$next"
  done
  compadd -- \${=$(_statusd_words "$cmdpath")}
}
compdef _statusd statusd
`
}

function fish(nodes: Node[]): string {
  const lines = [
    '# statusd completion for fish: statusd completion fish > ~/.config/fish/completions/statusd.fish',
    'complete -c statusd -f',
  ]
  for (const n of nodes) {
    // fish's own test: the path's words seen, and no subcommand of it yet
    const seen = n.path.map((w) => `__fish_seen_subcommand_from ${w}`)
    const subs = n.subcommands.map((s) => s.name)
    const here = n.path.length === 0 ? ['__fish_use_subcommand'] : seen
    const notDeeper = subs.length ? [`not __fish_seen_subcommand_from ${subs.join(' ')}`] : []
    const condition = sq([...here, ...notDeeper].join('; and '))
    for (const s of n.subcommands)
      lines.push(`complete -c statusd -n ${condition} -a ${s.name} -d ${sq(s.description)}`)
    const optionCondition = sq(
      n.path.length === 0 ? '__fish_use_subcommand' : [...seen, ...notDeeper].join('; and '),
    )
    for (const o of n.options)
      lines.push(
        `complete -c statusd -n ${optionCondition} -l ${o.flag.slice(2)} -d ${sq(o.description)}`,
      )
  }
  return `${lines.join('\n')}\n`
}

const SHELLS = { bash, zsh, fish } as const

/** `statusd completion bash|zsh|fish`: a script made from the command tree itself. */
export function completionCommand(program: Command, output: Output): void {
  program
    .command('completion')
    .description('print a shell completion script: bash, zsh or fish')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      `
Examples:
  $ source <(statusd completion bash)                    this bash only
  $ statusd completion bash > ~/.local/share/bash-completion/completions/statusd
  $ statusd completion zsh > ~/.zfunc/_statusd            with fpath+=(~/.zfunc) in .zshrc
  $ statusd completion fish > ~/.config/fish/completions/statusd.fish`,
    )
    .action((shell: string) => {
      if (!Object.hasOwn(SHELLS, shell))
        throw new UsageError(`completion knows bash, zsh and fish, not "${shell}"`)
      const script = SHELLS[shell as keyof typeof SHELLS](nodesOf(program))
      output.out(output.json ? `${JSON.stringify({ shell, script })}\n` : script)
    })
}
