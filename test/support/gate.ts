/**
 * A promise the test settles when it wants: lets a handler wait at a known point (free of
 * vitest, like `eventually`).
 */
export function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => (open = resolve));
  return { opened, open };
}
