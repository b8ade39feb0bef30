import { createSocket, Socket } from 'node:dgram';
import { AddressInfo } from 'node:net';
import * as dnsPacket from 'dns-packet';

export interface SunkRecords {
  txt?: string[];
  cname?: string;
}

const NXDOMAIN = 3;

/**
 * A local DNS server on 127.0.0.1 (UDP) answering TXT and CNAME questions from records the tests set:
 * an unknown name is NXDOMAIN, a known name without the asked type has no answers. The suite points
 * PROOF_DOMAIN_DNS_SERVERS at it, so domain checks never leave the machine.
 */
export class DnsSink {
  private readonly records = new Map<string, SunkRecords>();
  private socket: Socket | null = null;

  set(name: string, records: SunkRecords): void {
    this.records.set(name.toLowerCase(), records);
  }

  async start(): Promise<string> {
    const socket = createSocket('udp4');
    socket.on('message', (message, remote) => {
      const query = dnsPacket.decode(message);
      const question = query.questions?.[0];
      const known = question ? this.records.get(question.name.toLowerCase()) : undefined;
      const answers: dnsPacket.Answer[] = [];
      if (question && known?.txt && question.type === 'TXT') {
        answers.push(...known.txt.map((value) => ({ type: 'TXT' as const, name: question.name, ttl: 1, data: [value] })));
      }
      if (question && known?.cname && question.type === 'CNAME') {
        answers.push({ type: 'CNAME', name: question.name, ttl: 1, data: known.cname });
      }
      const reply = dnsPacket.encode({
        type: 'response', id: query.id, questions: query.questions, answers,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : NXDOMAIN),
      });
      socket.send(reply, remote.port, remote.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    this.socket = socket;
    return `127.0.0.1:${(socket.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.socket ? this.socket.close(() => resolve()) : resolve()));
  }
}
