export { createApi, type Api, type ApiOptions } from './api.js';
