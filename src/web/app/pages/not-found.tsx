export function NotFoundPage() {
  return (
    <section>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is no page here. <a href="/">Browse the marketplace</a>.
      </p>
    </section>
  );
}
