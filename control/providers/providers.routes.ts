/** REST routes of the providers domain (filled in by its issue). */
import { newRouter } from '../lib/http.js';

export const providersRoutes = newRouter();
