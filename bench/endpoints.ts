/**
 * The endpoints `npm run bench` measures: the main list of every service, each seeded with
 * enough rows for a full page in the bench tenant's test mode, and a few rows in its live mode
 * and in another tenant, so the owner conditions filter something.
 */

/** Calls the app in-process with one owner's key; fails loudly on anything but the expected status. */
export type Api = ((method: 'GET' | 'POST', path: string, body?: unknown, expectStatus?: number) => Promise<any>) & { mode: 'test' | 'live' };

export interface BenchEndpoint {
  /** Short name in the table. */
  name: string;
  /** What to request, given what the seeding created for the bench owner. */
  path: (seeded: Seeded) => string;
  /** Creates `count` rows the list shows, through the public API. */
  seed: (api: Api, count: number, seeded: Seeded) => Promise<void>;
}

/** Ids the seeding keeps for paths (e.g. the form whose submissions are listed). */
export type Seeded = Record<string, string>;

const S = '/api/v1/services';

async function times(count: number, create: (index: number) => Promise<unknown>): Promise<void> {
  for (let index = 0; index < count; index += 1) await create(index);
}

export const ENDPOINTS: BenchEndpoint[] = [
  {
    name: 'crm contacts',
    path: () => `${S}/crm/contacts?limit=50`,
    seed: (api, count) =>
      times(count, (i) => api('POST', `${S}/crm/contacts`, { name: `Contact ${i}`, email: `contact${i}@example.com`, phone: i % 3 ? `+1555${String(i).padStart(7, '0')}` : null })),
  },
  {
    name: 'forms',
    path: () => `${S}/forms/forms?limit=50`,
    seed: (api, count) =>
      times(count, (i) =>
        api('POST', `${S}/forms/forms`, {
          name: `Form ${i}`,
          status: 'published',
          fields: [
            { key: 'email', label: 'Email', type: 'email', required: true },
            {
              key: 'topic',
              label: 'Topic',
              type: 'select',
              options: [
                { value: 'sales', label: 'Sales' },
                { value: 'help', label: 'Help' },
              ],
            },
            { key: 'message', label: 'Message', type: 'textarea', max_length: 2000 },
          ],
        }),
      ),
  },
  {
    name: 'forms submissions',
    path: (seeded) => `${S}/forms/forms/${seeded.formId}/submissions?limit=50`,
    async seed(api, count, seeded) {
      const form = await api('POST', `${S}/forms/forms`, {
        name: 'Contact us',
        status: 'published',
        fields: [
          { key: 'email', label: 'Email', type: 'email', required: true },
          { key: 'message', label: 'Message', type: 'textarea' },
        ],
      });
      seeded.formId = form.id;
      await times(count, (i) => api('POST', `${S}/forms/forms/${form.slug}/submit`, { data: { email: `visitor${i}@example.com`, message: `Hello number ${i}` } }));
    },
  },
  {
    name: 'blogs posts',
    path: () => `${S}/blogs/posts?limit=50`,
    seed: (api, count) =>
      times(count, (i) =>
        api('POST', `${S}/blogs/posts`, {
          title: `Post number ${i}`,
          content: `# Post ${i}\n\nSome *text* for post ${i}, long enough to have an excerpt worth showing in a list.`,
          categories: ['news'],
          tags: ['bench', `t${i % 5}`],
        }),
      ),
  },
  {
    name: 'invoicing customers',
    path: () => `${S}/invoicing/customers?limit=50`,
    seed: (api, count) => times(count, (i) => api('POST', `${S}/invoicing/customers`, { display_name: `Customer ${i}`, email: `billing${i}@example.com`, billing_country: 'GB' })),
  },
  {
    name: 'invoicing invoices',
    path: () => `${S}/invoicing/invoices?limit=50`,
    async seed(api, count) {
      const customer = await api('POST', `${S}/invoicing/customers`, { display_name: 'Invoiced Ltd' });
      await times(count, (i) =>
        api('POST', `${S}/invoicing/invoices`, {
          customer_id: customer.id,
          line_items: [
            { description: 'Consulting', quantity: '2', unit_price: `${100 + i}.50` },
            { description: 'Travel', quantity: '1', unit_price: '35.00' },
          ],
        }),
      );
    },
  },
  {
    name: 'catalog products',
    path: () => `${S}/catalog/catalog/products?limit=50`,
    seed: (api, count) =>
      times(count, async (i) => {
        const product = await api('POST', `${S}/catalog/catalog/products`, { name: `Plan ${i}`, description: `The plan number ${i}` });
        await api('POST', `${S}/catalog/catalog/products/${product.id}/prices`, { unit_price_cents: 1000 + i, currency: 'usd', billing_interval: 'month' });
      }),
  },
  {
    name: 'catalog subscriptions',
    path: () => `${S}/catalog/catalog/subscriptions?limit=50`,
    async seed(api, count) {
      const product = await api('POST', `${S}/catalog/catalog/products`, { name: 'Subscribed plan' });
      await api('POST', `${S}/catalog/catalog/products/${product.id}/prices`, { unit_price_cents: 2900, currency: 'usd', billing_interval: 'month' });
      await times(count, async (i) => {
        const contact = await api('POST', `${S}/crm/contacts`, { name: `Subscriber ${i}` });
        await api('POST', `${S}/catalog/catalog/subscriptions`, { product_id: product.id, contact_id: contact.id });
      });
    },
  },
  {
    name: 'payments checkout sessions',
    path: () => `${S}/payments/checkout-sessions?limit=50`,
    // Live checkout sessions need a Stripe key; the other tenant's test rows still filter.
    seed: (api, count) =>
      times(api.mode === 'live' ? 0 : count, (i) =>
        api('POST', `${S}/payments/checkout-sessions`, {
          line_items: [
            { name: `T-shirt ${i}`, unit_amount_cents: 2500, quantity: 2 },
            { name: 'Gift wrap', unit_amount_cents: 300, quantity: 1 },
          ],
          currency: 'usd',
          success_url: 'https://shop.example.com/thanks',
          cancel_url: 'https://shop.example.com/cart',
        }),
      ),
  },
  {
    name: 'customer-auth users',
    path: () => `${S}/customer-auth/users?limit=50`,
    seed: (api, count) => times(count, (i) => api('POST', `${S}/customer-auth/users`, { email: `user${i}@example.com`, name: `User ${i}`, metadata: { plan: 'pro' } })),
  },
  {
    name: 'appointments resources',
    path: () => `${S}/appointments/resources?limit=50`,
    seed: (api, count) =>
      times(count, (i) =>
        api('POST', `${S}/appointments/resources`, {
          name: `Resource ${i}`,
          kind: i % 4 ? 'staff' : 'room',
          email: `resource${i}@example.com`,
          timezone: 'Europe/London',
          color: '#3B82F6',
          skills: ['checkup', `skill_${i % 5}`],
          capacity: 1 + (i % 3),
        }),
      ),
  },
  {
    name: 'social accounts',
    path: () => `${S}/social/accounts?limit=50`,
    // Sandbox accounts connect with test keys only: the live mode of the bench owner has none.
    seed: (api, count) =>
      api.mode === 'live'
        ? Promise.resolve()
        : times(count, (i) => api('POST', `${S}/social/accounts`, { platform: 'sandbox', display_name: `Account ${i}`, visibility: i % 2 ? 'shared' : 'private' })),
  },
  {
    name: 'tasks tasks',
    path: () => `${S}/tasks/tasks?limit=50`,
    seed: (api, count) =>
      times(count, (i) =>
        api('POST', `${S}/tasks/tasks`, {
          title: `Task ${i}`,
          instructions: 'Write up the weekly report and attach the figures.',
          priority: ['low', 'normal', 'high'][i % 3],
          status: 'published',
          submission_mode: 'note_or_files',
          max_score: 10,
          rubric: [{ id: 'accuracy', label: 'Accuracy', max_score: 10, weight: 1 }],
          checklist: [{ id: 'c1', label: 'Attach figures', required: true, requires_file: true }],
          custom_fields: { cost_centre: `CC-${i % 7}` },
        }),
      ),
  },
  {
    name: 'outreach enrollments',
    path: (seeded) => `${S}/outreach/sequences/${seeded.sequenceId}/enrollments?limit=50`,
    async seed(api, count, seeded) {
      const sequence = await api('POST', `${S}/outreach/sequences`, {
        name: 'Follow-up',
        status: 'draft',
        steps: [
          { body: 'Hi {{display_name}}!', delay: { amount: 0, unit: 'minutes' } },
          { body: 'Any questions?', delay: { amount: 2, unit: 'days' } },
        ],
        send_window: { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], start: '09:00', end: '17:00' },
        timezone: 'America/New_York',
      });
      seeded.sequenceId = sequence.id;
      for (let start = 0; start < count; start += 100) {
        const batch = Array.from({ length: Math.min(100, count - start) }, (_, offset) => ({
          address: `+1415${String(start + offset).padStart(7, '0')}`,
          display_name: `Person ${start + offset}`,
        }));
        await api('POST', `${S}/outreach/sequences/${sequence.id}/enrollments`, { enrollments: batch });
      }
    },
  },
  {
    name: 'affiliates partners',
    path: () => `${S}/affiliates/affiliates?limit=50`,
    async seed(api, count) {
      const programme = await api('POST', `${S}/affiliates/programmes`, {
        name: 'Partners',
        commission_type: 'percent',
        commission_percent: 20,
        landing_url: 'https://shop.example.com/',
      });
      const tier = await api('POST', `${S}/affiliates/programmes/${programme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 30 });
      await times(count, (i) =>
        api('POST', `${S}/affiliates/affiliates`, {
          name: `Partner ${i}`,
          email: `partner${i}@example.com`,
          programme_id: programme.id,
          ...(i % 3 ? {} : { tier_id: tier.id }),
          ...(i % 5 ? {} : { commission_type: 'amount', commission_amount_cents: 1500 }),
          cookie_days: i % 2 ? null : 60,
        }),
      );
    },
  },
  {
    name: 'seo questions',
    path: (seeded) => `${S}/seo/sites/${seeded.siteId}/questions?limit=50`,
    async seed(api, count, seeded) {
      const site = await api('POST', `${S}/seo/sites`, { domain: 'bench.example.com', name: 'Bench' });
      seeded.siteId = site.id;
      for (let start = 0; start < count; start += 50) {
        const questions = Array.from({ length: Math.min(50, count - start) }, (_, offset) => ({ question: `How does feature ${start + offset} work?` }));
        await api('POST', `${S}/seo/sites/${site.id}/questions`, { questions }, 200);
      }
    },
  },
];
