import { DataSource } from 'typeorm';
import { mintSignInLink } from '../../db/platform/sign-in-links';
import { Config } from '../../runtime/config';
import { requiredMailTransport } from '../../runtime/mailer';

export interface SignInActivityDeps {
  dataSource: DataSource;
  config: Config;
}

/** The console sign-in mail: the secret is minted here, so it is in the mail and nowhere in a workflow's history. */
export function createSignInActivities({ dataSource, config }: SignInActivityDeps) {
  return {
    async deliverSignInLink(linkId: string): Promise<string> {
      const mailer = requiredMailTransport(config);
      const link = await mintSignInLink(dataSource, linkId, config.consoleUrl);
      if (!link) return 'expired';
      await mailer.send({
        to: link.email,
        subject: 'Your sign-in link',
        text: [
          'Someone (we hope you) asked to sign in to the console.', '',
          `Sign in: ${link.url}`, '',
          'The link works once, for 15 minutes. If you did not ask for it, ignore this mail.',
        ].join('\n'),
      });
      return 'delivered';
    },
  };
}
