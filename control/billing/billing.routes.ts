/** REST routes of the billing domain (filled in by its issue). */
import { newRouter } from '../lib/http.js';

export const billingRoutes = newRouter();
