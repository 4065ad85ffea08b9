// What every tool group receives from createServer.
import type { Backend } from '../backend/types.js';
import type { Logger } from '../log.js';

export interface ToolDeps {
  backend: Backend;
  logger: Logger;
}
