export { createAdmin, type Admin, type AdminOptions } from './admin.js';
export { checkAuthConfig, isLoopback } from './auth.js';
