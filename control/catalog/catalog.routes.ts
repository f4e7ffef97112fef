/** REST routes of the catalog domain (filled in by its issue). */
import { newRouter } from '../lib/http.js';

export const catalogRoutes = newRouter();
