/** REST routes of the usage domain (filled in by its issue). */
import { newRouter } from '../lib/http.js';

export const usageRoutes = newRouter();
