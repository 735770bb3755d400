// Types for express-basic-auth 1.2 (the package ships none; this declaration serves the whole project).
declare module "express-basic-auth" {
  import type { Request, RequestHandler } from "express";

  type AuthenticatedRequest = Request & { auth?: { user: string; password: string } };

  interface BasicAuthOptions {
    users?: Record<string, string>;
    challenge?: boolean;
    realm?: string | ((req: Request) => string);
    authorizer?:
      | ((user: string, password: string) => boolean)
      | ((user: string, password: string, callback: (error: unknown, approved: boolean) => void) => void);
    authorizeAsync?: boolean;
    unauthorizedResponse?: string | object | ((req: AuthenticatedRequest) => string | object);
  }

  interface BasicAuth {
    (options: BasicAuthOptions): RequestHandler;
    /** Constant-time string comparison. */
    safeCompare(userInput: string, secret: string): boolean;
  }

  const basicAuth: BasicAuth;
  export default basicAuth;
}
