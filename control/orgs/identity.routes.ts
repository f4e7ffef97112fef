/** placeholder */
import { newRouter } from '../lib/http.js';

export const identityRoutes = newRouter();
