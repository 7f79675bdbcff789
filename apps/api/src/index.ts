export { createApi, type Api, type ApiOptions } from './api.js';
export { openApiDocument } from './ingest/index.js';
