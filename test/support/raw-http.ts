import { connect } from 'node:net';

/** An answer to a request written byte for byte: its status, its head (status line and headers) and its body. */
export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/**
 * Writes a request to a server on 127.0.0.1 byte for byte, as a client that is not Node's would (a method Node's
 * clients do not send, no Host at all), and reads the answer until the server closes the connection.
 */
export function rawRequest(port: number, text: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const end = answer.indexOf('\r\n\r\n');
      resolve({ status: Number(answer.split(' ')[1]), head: answer.slice(0, end), body: answer.slice(end + 4) });
    });
  });
}
