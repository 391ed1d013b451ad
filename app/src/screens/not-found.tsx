import { Link } from '../router.tsx'

export default function NotFound() {
  return (
    <>
      <h1>Nothing here</h1>
      <p>
        This page does not exist. <Link href="/">Back to the board</Link>
      </p>
    </>
  )
}
