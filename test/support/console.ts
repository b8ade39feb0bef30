import assert from 'node:assert/strict';
import { eventually } from './fixtures';
import { ctx } from './root-hooks';
import { bodyOf } from './smtp-sink';

export const SIGN_IN_LINK = /\/console\/sign-in#(sl_[A-Za-z0-9_-]{43})/;

/** The secret of the newest sign-in link mailed to `email`, read from the local SMTP sink. */
export async function mailedSignInToken(email: string, after = 0): Promise<string> {
  const mails = await eventually(async () => (ctx.smtpSink.to(email).length > after ? ctx.smtpSink.to(email) : undefined), 30_000);
  const token = SIGN_IN_LINK.exec(bodyOf(mails[mails.length - 1].raw))?.[1];
  assert.ok(token, 'the e-mail carries a console sign-in link');
  return token;
}
