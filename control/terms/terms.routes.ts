/** REST routes of the terms domain (filled in by its issue). */
import { newRouter } from '../lib/http.js';

export const termsRoutes = newRouter();
