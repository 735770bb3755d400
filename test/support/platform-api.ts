/** The local platform's management API as one user sees it (the admin, or a user it creates). */
export const ADMIN = { email: "admin@example.com", password: "admin-password" };

export interface Answer {
  status: number;
  text: string;
  headers: Headers;
  json<T = unknown>(): T;
}

export interface Send {
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/** The management API as one user sees it. */
export class Api {
  constructor(
    readonly url: string,
    readonly token?: string,
  ) {}

  async send(method: string, path: string, options: Send = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.token) headers.Authorization = `bearer ${this.token}`;
    let body: string | undefined;
    if (options.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(options.json);
    } else if (options.text !== undefined) {
      headers["Content-Type"] ??= "text/plain";
      body = options.text;
    }
    const response = await fetch(`${this.url}${path}`, { method, headers, body });
    const text = await response.text();
    return { status: response.status, text, headers: response.headers, json: <T>() => JSON.parse(text) as T };
  }

  get = (path: string) => this.send("GET", path);
  post = (path: string, options?: Send) => this.send("POST", path, options);
  put = (path: string, options?: Send) => this.send("PUT", path, options);
  delete = (path: string, options?: Send) => this.send("DELETE", path, options);

  /** Creates the user with this API's token (the admin's: sign-up is closed) and logs in: the API as that user. */
  async user(email: string, password = "user-password"): Promise<Api> {
    await this.post("/users", { json: { email, password } });
    return this.login(email, password);
  }

  async login(email: string, password: string): Promise<Api> {
    const answer = await new Api(this.url).post(`/users/${email}/tokens`, { json: { password } });
    if (answer.status !== 200) throw new Error(`login of ${email} failed: ${answer.status} ${answer.text}`);
    return new Api(this.url, answer.json<{ token: string }>().token);
  }

  /** Fails the test with the answer when the status is not the expected one. */
  async ok(answer: Promise<Answer> | Answer, status = 200): Promise<Answer> {
    const got = await answer;
    if (got.status !== status) throw new Error(`expected ${status}, got ${got.status}: ${got.text}`);
    return got;
  }
}
