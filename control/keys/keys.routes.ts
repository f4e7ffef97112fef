/** placeholder */
import { newRouter } from '../lib/http.js';

export const keysRoutes = newRouter();
