/** The provider API's REST path, with the id escaped. */
export const apiPath = (id: string, rest = '') => `/v1/provider/apis/${encodeURIComponent(id)}${rest}`;
