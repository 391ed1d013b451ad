import { Plain } from '../components/layout.tsx'
import { Link } from '../router.tsx'

// Sign-up (docs/accounts.md#signing-up): the account screens replace this placeholder.
export default function SignUp() {
  return (
    <Plain>
      <h1>Create an account</h1>
      <p>
        Ask the person who runs this statusd for an invitation link.{' '}
        <Link href="/sign-in">Sign in</Link>
      </p>
    </Plain>
  )
}
