/**
 * The marketplace's category list (docs/catalog.md) and how an imported document's categories and tags map onto
 * it: APIs.guru `x-apisguru-categories` first, then `info.x-category` / `x-rapidapi-info.category`, then tag names.
 */

export const MARKETPLACE_CATEGORIES = [
  'ai',
  'analytics',
  'cloud',
  'commerce',
  'communication',
  'data',
  'developer-tools',
  'education',
  'entertainment',
  'finance',
  'location',
  'media',
  'productivity',
  'security',
  'social',
  'weather',
  'other',
] as const;

export type MarketplaceCategory = (typeof MARKETPLACE_CATEGORIES)[number];

/** Words (normalised lowercase-dashed) that mean a marketplace category; APIs.guru's whole list is covered. */
const SYNONYMS: Record<string, MarketplaceCategory> = {
  ai: 'ai',
  'machine-learning': 'ai',
  ml: 'ai',
  nlp: 'ai',
  text: 'ai',
  'artificial-intelligence': 'ai',
  analytics: 'analytics',
  monitoring: 'analytics',
  metrics: 'analytics',
  marketing: 'analytics',
  cloud: 'cloud',
  hosting: 'cloud',
  storage: 'cloud',
  backend: 'cloud',
  iot: 'cloud',
  infrastructure: 'cloud',
  commerce: 'commerce',
  ecommerce: 'commerce',
  'e-commerce': 'commerce',
  shopping: 'commerce',
  customer_relation: 'commerce',
  'customer-relation': 'commerce',
  crm: 'commerce',
  communication: 'communication',
  email: 'communication',
  messaging: 'communication',
  telecom: 'communication',
  sms: 'communication',
  support: 'communication',
  data: 'data',
  open_data: 'data',
  'open-data': 'data',
  search: 'data',
  database: 'data',
  'developer-tools': 'developer-tools',
  developer_tools: 'developer-tools',
  tools: 'developer-tools',
  devops: 'developer-tools',
  education: 'education',
  entertainment: 'entertainment',
  games: 'entertainment',
  gaming: 'entertainment',
  sports: 'entertainment',
  finance: 'finance',
  financial: 'finance',
  payment: 'finance',
  payments: 'finance',
  banking: 'finance',
  location: 'location',
  maps: 'location',
  geo: 'location',
  transport: 'location',
  travel: 'location',
  media: 'media',
  video: 'media',
  music: 'media',
  images: 'media',
  productivity: 'productivity',
  collaboration: 'productivity',
  project_management: 'productivity',
  'project-management': 'productivity',
  enterprise: 'productivity',
  forms: 'productivity',
  'time-management': 'productivity',
  security: 'security',
  identity: 'security',
  auth: 'security',
  social: 'social',
  weather: 'weather',
  other: 'other',
};

const norm = (s: string): string =>
  s
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9_]+/g, '-')
    .replace(/^-+|-+$/g, '');

/** The marketplace category a word names, or null. */
export function marketplaceCategory(word: string): MarketplaceCategory | null {
  const w = norm(word);
  return SYNONYMS[w] ?? SYNONYMS[w.replace(/_/g, '-')] ?? null;
}

/** The first candidate (in priority order) that maps onto the list; 'other' when none does. */
export function pickCategory(candidates: string[]): MarketplaceCategory {
  for (const c of candidates) {
    const m = marketplaceCategory(c);
    if (m && m !== 'other') return m;
  }
  return 'other';
}
