import { t } from '../i18n.ts'
import { Link } from '../router.tsx'

export default function NotFound() {
  return (
    <>
      <h1>{t('app.notFound.title')}</h1>
      <p>
        {t('app.notFound.text')} <Link href="/">{t('app.notFound.back')}</Link>
      </p>
    </>
  )
}
