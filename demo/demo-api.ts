/** The demo listing's contract, shared by the demo upstream server and the control plane's seed. */

export const DEMO_SLUG = 'demo-weather';
export const DEMO_PROVIDER_SLUG = 'svc-demo';
/** The upstream requires this bearer token; the seed stores it as the listing's credential (shows injection). */
export const DEMO_UPSTREAM_SECRET = 'demo-upstream-secret';

/** Prices in cents per `METHOD path`; everything else is free. */
export const DEMO_PRICES: Record<string, number> = {
  'GET /forecast': 2,
  'POST /sentiment': 1,
};

const City = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    country: { type: 'string' },
    lat: { type: 'number' },
    lon: { type: 'number' },
  },
};

export const DEMO_OPENAPI = {
  openapi: '3.0.3',
  info: {
    title: 'Demo Weather',
    version: '1.0.0',
    description:
      'Deterministic demo weather and text API shipped with svc. Current conditions and city lists are free; forecasts and sentiment cost a few cents.',
  },
  tags: [{ name: 'weather' }, { name: 'demo' }, { name: 'text' }],
  paths: {
    '/health': { get: { operationId: 'health', summary: 'Health check', responses: { '200': { description: 'ok' } } } },
    '/cities': {
      get: {
        operationId: 'listCities',
        summary: 'List known cities (free)',
        responses: {
          '200': {
            description: 'cities',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { cities: { type: 'array', items: City } } },
              },
            },
          },
        },
      },
    },
    '/cities/{city}': {
      get: {
        operationId: 'getCity',
        summary: 'One city (free)',
        parameters: [{ name: 'city', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'city', content: { 'application/json': { schema: City } } },
          '404': { description: 'unknown city' },
        },
      },
    },
    '/current': {
      get: {
        operationId: 'currentWeather',
        summary: 'Current weather for a city (free)',
        parameters: [{ name: 'city', in: 'query', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'conditions',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { city: { type: 'string' }, temp_c: { type: 'number' }, condition: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
    '/forecast': {
      get: {
        operationId: 'forecast',
        summary: 'Daily forecast for a city (paid)',
        parameters: [
          { name: 'city', in: 'query', required: true, schema: { type: 'string' } },
          {
            name: 'days',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: 1, maximum: 7, default: 3 },
          },
        ],
        responses: { '200': { description: 'forecast' } },
      },
    },
    '/sentiment': {
      post: {
        operationId: 'sentiment',
        summary: 'Score the sentiment of a text (paid)',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['text'], properties: { text: { type: 'string', maxLength: 5000 } } },
            },
          },
        },
        responses: {
          '200': {
            description: 'score',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { score: { type: 'number' }, label: { type: 'string' } } },
              },
            },
          },
        },
      },
    },
  },
};
