// Peer "raw node:http": answers every request with one constant status JSON. The ceiling
// any Node HTTP service on this machine can reach; statusd's figures are ratios of it.
import { createServer } from 'node:http'

const body = JSON.stringify({
  id: 'GPZy1fIi0v77czoB-JRdD',
  shareId: 'aks5xe5w',
  statusKey: 'bench-1',
  name: 'bench-1',
  type: 'text',
  value: '80%',
  accessType: 'private',
  description: '',
  colorNo: 1,
  accessTypeUserList: 'owner',
  accessTypeHistory: 'private',
  changeCount: 2,
  createdAt: '2026-11-22T03:06:28.342Z',
  updatedAt: '2026-11-22T03:06:28.370Z',
  valueUpdatedAt: '2026-11-22T03:06:28.370Z',
})

const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    })
    res.end(body)
  })
})
server.listen(Number(process.env.PORT ?? 8090), '127.0.0.1', () => {
  process.stdout.write(`ready ${JSON.stringify(server.address())}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
