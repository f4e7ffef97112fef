/** REST routes of the market domain (filled in by its issue). */
import { newRouter } from '../lib/http.js';

export const marketRoutes = newRouter();
