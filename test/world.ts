import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { call, type Response } from './harness.js';

/**
 * One of every resource of every service, created through the public API with one key, so a
 * test can address any operation with real ids: the fuzz test fills every path template from
 * it, and a list-isolation test can build one world per tenant and mode and check that no
 * owner ever sees another's rows.
 *
 * Every searchable name, title and email carries the world's `tag`, so `search` filters can
 * be tried across owners; values that must be unique (emails, slugs, coupon codes) also carry
 * a short random suffix, so several worlds may share a tenant and mode.
 */
export interface World {
  /** The distinctive text in every name of this world. */
  tag: string;
  /** The key the world was built with (its tenant and mode own every row). */
  key: string;
  ids: WorldIds;
  /** Resources that could not be created with this key, and why (e.g. live payments without Stripe). */
  skipped: Partial<Record<keyof WorldIds, string>>;
  /** A path template of the OpenAPI document (`/api/v1/services/crm/contacts/{id}`) with this world's ids filled in. */
  fillPath(template: string, overrides?: IdOverrides): string;
}

export interface WorldIds {
  // crm
  contact: string;
  company: string;
  // blogs: a published post (readable by slug on the public side) and a subscriber
  post: string;
  postSlug: string;
  subscriber: string;
  // forms: a published form with one submission
  form: string;
  formSlug: string;
  submission: string;
  // invoicing: a finalized invoice partly paid (it takes more payments), one refund, and one refund held for approval
  customer: number;
  invoice: number;
  /** A second invoice left in draft, for the operations only a draft allows. */
  draftInvoice: number;
  payment: number;
  refund: number;
  approvalPolicy: number;
  approval: number;
  // customer-auth: a user with a session, an email verification and a pending TOTP enrolment
  user: string;
  session: string;
  verificationToken: string;
  // catalog: a product with a price, a coupon, and a subscription of the contact
  product: string;
  price: string;
  coupon: string;
  couponCode: string;
  subscription: string;
  // payments (undefined when the key cannot create them, see `skipped`)
  checkoutSession: string | undefined;
  paymentLink: string | undefined;
  /** A second session, paid in the sandbox, and one partial refund of it (it takes more refunds). */
  paidCheckoutSession: string | undefined;
  paymentRefund: string | undefined;
  // webhooks: an endpoint, the ping sent to it (its delivery) and the event of that ping
  webhookEndpoint: string;
  webhookDelivery: string;
  webhookEvent: string;
  // appointments: a resource, an asset of the invoicing customer, and a booking of both
  appointmentResource: string;
  appointmentAsset: string;
  appointmentBooking: string;
  appointmentCustomField: string;
  // tasks: a category, a task in it with a checklist item, its assignment with one submission, and a link to the invoice
  taskCategory: number;
  task: number;
  taskAssignment: number;
  taskSubmission: number;
  taskChecklistItem: string;
  taskLink: number;
  // outreach: a sequence with one enrollment, a suppressed number and an inbound message
  outreachSequence: string;
  outreachEnrollment: string;
  outreachSuppression: string;
  outreachMessage: string;
  // affiliates: a programme with a tier, a partner of it, a referral of the contact and a conversion
  affiliateProgramme: string;
  affiliateTier: string;
  affiliatePartner: string;
  affiliateReferral: string;
  affiliateConversion: string;
  // social: a sandbox account (test mode only), an upload link (no bytes sent) and a draft post
  socialAccount: string | undefined;
  socialFile: string;
  socialPost: string | undefined;
  // seo: a site with imported search data (so topics), one tracked question, one competitor and a queued crawl (never run: the world makes no outbound requests)
  seoSite: string;
  seoQuestion: string;
  seoCompetitor: string;
  seoCrawl: string;
}

/** Ids outside a tenant's world, such as the operator API's tenant and key ids. */
export interface ExtraIds {
  tenant?: string;
  apiKey?: string;
}

/** Ids to use instead of the world's for one path (say, a draft invoice where the world's is paid). */
export type IdOverrides = Partial<WorldIds> & ExtraIds;

export interface WorldOptions {
  /** Distinctive text put in every name; default `world-<random>`. */
  tag?: string;
}

const API = '/api/v1/services';

/** A reply's `data`, read loosely: the world only picks ids and slugs out of it. */
type Data = Record<string, unknown>;
const text = (value: unknown) => String(value);
const integer = (value: unknown) => Number(value);

export async function buildWorld(app: FastifyInstance, key: string, options: WorldOptions = {}): Promise<World> {
  const tag = options.tag ?? `world-${randomUUID().slice(0, 8)}`;
  const unique = `${slugOf(tag)}-${randomUUID().slice(0, 6)}`;
  const email = (who: string) => `${who}.${unique}@example.com`;
  const skipped: World['skipped'] = {};

  const send = async (method: string, url: string, expected: number, body?: unknown): Promise<Data> => {
    const response = await call(app, method, `${API}${url}`, { key, ...(body === undefined ? {} : { body }) });
    return expectStatus(response, expected, `${method} ${url}`);
  };

  // crm
  const company = await send('POST', '/crm/companies', 201, { name: `${tag} company`, domain: `${unique}.example.com` });
  const contact = await send('POST', '/crm/contacts', 201, { name: `${tag} contact`, email: email('contact'), company_id: company.id });

  // blogs
  const post = await send('POST', '/blogs/posts', 201, { title: `${tag} post`, slug: `post-${unique}`, content: `About ${tag}.`, categories: ['news'] });
  await send('POST', `/blogs/posts/${post.id}/status`, 200, { status: 'published' });
  const subscriber = await send('POST', '/blogs/subscribers', 201, { email: email('subscriber'), name: `${tag} subscriber` });

  // forms
  const form = await send('POST', '/forms/forms', 201, {
    name: `${tag} form`,
    slug: `form-${unique}`,
    status: 'published',
    fields: [
      { key: 'name', label: 'Name', type: 'text', required: true },
      { key: 'email', label: 'Email', type: 'email' },
    ],
  });
  const submission = await send('POST', `/forms/forms/${text(form.slug)}/submit`, 201, { data: { name: `${tag} visitor`, email: email('visitor') } });

  // invoicing
  const customer = await send('POST', '/invoicing/customers', 201, { display_name: `${tag} customer`, email: email('customer') });
  const draft = await send('POST', '/invoicing/invoices', 201, {
    customer_id: customer.id,
    line_items: [{ description: `${tag} work`, quantity: '1', unit_price: '500.00' }],
  });
  await send('POST', `/invoicing/invoices/${draft.id}/finalize`, 200);
  const secondDraft = await send('POST', '/invoicing/invoices', 201, {
    customer_id: customer.id,
    line_items: [{ description: `${tag} draft work`, quantity: '2', unit_price: '25.00' }],
  });
  const payment = await send('POST', `/invoicing/invoices/${draft.id}/payments`, 201, { amount: '400.00', method: 'bank_transfer' });
  const refund = await send('POST', '/invoicing/refunds', 201, { invoice_id: draft.id, customer_payment_id: payment.id, amount: '10.00', reason: `${tag} refund` });
  const approvalPolicy = await send('POST', '/invoicing/approval-policies', 201, { action: 'refund', min_amount: '100.00' });
  const held = await send('POST', '/invoicing/refunds', 202, { invoice_id: draft.id, customer_payment_id: payment.id, amount: '100.00' });

  // customer-auth
  const password = `${unique} correct horse`;
  const user = await send('POST', '/customer-auth/users', 201, { email: email('user'), password, name: `${tag} user` });
  const login = await send('POST', '/customer-auth/sessions', 201, { email: user.email, password });
  const verification = await send('POST', `/customer-auth/users/${user.id}/email-verifications`, 201);
  await send('POST', `/customer-auth/users/${user.id}/mfa/totp`, 201);

  // catalog
  const product = await send('POST', '/catalog/catalog/products', 201, { name: `${tag} product` });
  const price = await send('POST', `/catalog/catalog/products/${product.id}/prices`, 201, { unit_price_cents: 1500, currency: 'USD', billing_interval: 'month' });
  const couponCode = `C${unique.replace(/[^A-Za-z0-9]/g, '')}`.slice(0, 64);
  const coupon = await send('POST', '/catalog/catalog/coupons', 201, { code: couponCode, discount_type: 'percent', percent_off: 10 });
  const subscription = await send('POST', '/catalog/catalog/subscriptions', 201, { product_id: product.id, price_id: price.id, contact_id: contact.id });

  // payments: a live key needs Stripe configured; without it the server answers 503 by design.
  const optional = async (name: 'checkoutSession' | 'paymentLink' | 'paidCheckoutSession', url: string, body: unknown): Promise<string | undefined> => {
    const response = await call(app, 'POST', `${API}${url}`, { key, body });
    if (response.statusCode === 503 && response.json().error?.code === 'live_payments_not_configured') {
      skipped[name] = 'live_payments_not_configured';
      return undefined;
    }
    return text(expectStatus(response, 201, `POST ${url}`).id);
  };
  const checkoutSession = await optional('checkoutSession', '/payments/checkout-sessions', {
    amount_cents: 2500,
    description: `${tag} checkout`,
    currency: 'USD',
    success_url: 'https://example.com/paid',
  });
  const paymentLink = await optional('paymentLink', '/payments/payment-links', { name: `${tag} link`, amount_cents: 900, currency: 'USD' });
  // A paid session (the hosted page's card form, as a buyer submits it) with one partial refund.
  const paidCheckoutSession = await optional('paidCheckoutSession', '/payments/checkout-sessions', {
    amount_cents: 3000,
    description: `${tag} paid checkout`,
    currency: 'USD',
    success_url: 'https://example.com/paid',
  });
  let paymentRefund: string | undefined;
  if (paidCheckoutSession === undefined) {
    skipped.paymentRefund = skipped.paidCheckoutSession;
  } else {
    await payCheckoutSession(app, paidCheckoutSession);
    paymentRefund = text(
      (await send('POST', '/payments/refunds', 201, { checkout_session_id: paidCheckoutSession, amount_cents: 1000, reason: 'requested_by_customer', metadata: { world: tag } }))
        .id,
    );
  }

  // webhooks
  // Port 1 of loopback refuses at once: deliveries that later tests' job runs attempt fail in a millisecond, not on a DNS timeout.
  const webhookEndpoint = await send('POST', '/webhooks/endpoints', 201, {
    url: `https://127.0.0.1:1/${unique}`,
    enabled_events: ['webhooks.endpoint.pinged'],
    description: `${tag} endpoint`,
  });
  const ping = await send('POST', `/webhooks/endpoints/${text(webhookEndpoint.id)}/test`, 202);

  // appointments
  const appointmentCustomField = await send('POST', '/appointments/custom-fields', 201, { applies_to: 'resource', key: 'world_note', label: `${tag} field`, type: 'text' });
  const appointmentResource = await send('POST', '/appointments/resources', 201, {
    name: `${tag} resource`,
    kind: 'staff',
    timezone: 'Europe/London',
    skills: ['world'],
    custom_fields: { world_note: `${tag} note` },
  });
  const appointmentAsset = await send('POST', '/appointments/assets', 201, { name: `${tag} asset`, kind: 'property', customer_id: customer.id, identifier: `${tag}-asset` });
  // A month ahead of the real clock, so the booking never falls into the past.
  const bookingDay = new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString().slice(0, 10);
  const appointmentBooking = await send('POST', '/appointments/bookings', 201, {
    resource_id: appointmentResource.id,
    asset_id: appointmentAsset.id,
    customer_id: customer.id,
    starts_at: `${bookingDay}T09:00:00Z`,
    ends_at: `${bookingDay}T10:00:00Z`,
    notes: `${tag} booking`,
  });

  // tasks
  const taskCategory = await send('POST', '/tasks/categories', 201, { name: `${tag} category`, grading_scheme: 'points' });
  const task = await send('POST', '/tasks/tasks', 201, {
    title: `${tag} task`,
    status: 'published',
    category_id: taskCategory.id,
    due_at: new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString(),
    max_score: 10,
    checklist: [{ id: 'world-item', label: `${tag} item`, required: false }],
  });
  const [taskAssignment] = (await send('POST', `/tasks/tasks/${text(task.id)}/assignments`, 201, { user_ids: [7], actor_user_id: 1 })) as unknown as Data[];
  const taskSubmission = await send('POST', `/tasks/assignments/${text(taskAssignment!.id)}/submissions`, 201, { note: `${tag} submission` });
  const taskLink = await send('POST', `/tasks/tasks/${text(task.id)}/links`, 201, { source: 'invoicing', source_id: String(draft.id) });
  // outreach: numbers drawn at random, as a repeat enrolment or suppression answers 200
  const phoneNumber = () => `+1415555${String(Math.floor(Math.random() * 10000)).padStart(4, '0')}`;
  const outreachSequence = await send('POST', '/outreach/sequences', 201, {
    name: `${tag} sequence`,
    steps: [{ body: 'Hi {{display_name}}', delay: { amount: 1, unit: 'days' } }],
    send_window: { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], start: '09:00', end: '17:00' },
    timezone: 'America/New_York',
  });
  const outreachEnrollment = await send('POST', `/outreach/sequences/${text(outreachSequence.id)}/enrollments`, 201, { address: phoneNumber(), display_name: `${tag} person` });
  const outreachSuppression = await send('POST', '/outreach/suppressions', 201, {
    address: `+1212555${String(Math.floor(Math.random() * 10000)).padStart(4, '0')}`,
    note: `${tag} suppression`,
  });
  const outreachInbound = await send('POST', '/outreach/inbound', 200, {
    from: `+1646555${String(Math.floor(Math.random() * 10000)).padStart(4, '0')}`,
    to: '+15005550006',
    body: `${tag} hello`,
  });
  // affiliates
  const affiliateProgramme = await send('POST', '/affiliates/programmes', 201, {
    name: `${tag} programme`,
    commission_type: 'percent',
    commission_percent: 20,
    landing_url: `https://${unique}.example.com/`,
  });
  const affiliateTier = await send('POST', `/affiliates/programmes/${text(affiliateProgramme.id)}/tiers`, 201, {
    name: `${tag} tier`,
    commission_type: 'percent',
    commission_percent: 30,
  });
  const affiliatePartner = await send('POST', '/affiliates/affiliates', 201, {
    name: `${tag} partner`,
    email: email('partner'),
    contact_id: contact.id,
    programme_id: affiliateProgramme.id,
    tier_id: affiliateTier.id,
  });
  const affiliateReferral = await send('POST', '/affiliates/referrals', 201, { affiliate_id: affiliatePartner.id, contact_id: contact.id, email: email('referred') });
  const affiliateConversion = await send('POST', '/affiliates/conversions', 201, { referral_id: affiliateReferral.id, amount_cents: 10000, external_id: `${tag}-order` });

  // social: sandbox accounts connect with test keys only; a live world has no account and no post
  let socialAccount: string | undefined;
  let socialPost: string | undefined;
  if (key.startsWith('sk_test_')) {
    socialAccount = text((await send('POST', '/social/accounts', 201, { platform: 'sandbox', display_name: `${tag} account` })).id);
    socialPost = text((await send('POST', '/social/posts', 201, { account_ids: [socialAccount], text: `${tag} post`, status: 'draft' })).id);
  } else {
    skipped.socialAccount = 'sandbox_only_in_test_mode';
    skipped.socialPost = 'sandbox_only_in_test_mode';
  }
  const socialFile = await send('POST', '/social/files/upload-links', 201, { file_name: `${slugOf(tag)}.png`, size_bytes: 100, sha256: 'a'.repeat(64) });
  // seo
  const seoSite = await send('POST', '/seo/sites', 201, { domain: `${unique}.example.com`, name: `${tag} site` });
  const seoAdded = await send('POST', `/seo/sites/${text(seoSite.id)}/questions`, 200, { questions: [{ question: `What is ${tag}?` }] });
  const seoCompetitor = await send('POST', `/seo/sites/${text(seoSite.id)}/competitors`, 201, { domain: `rival-${unique}.example.com`, name: `${tag} rival` });
  await send('POST', `/seo/sites/${text(seoSite.id)}/search-data`, 200, {
    rows: [{ query: `${tag} question`, page: `https://${unique}.example.com/`, impressions: 10, clicks: 1, position: 3.5, date: '2026-10-01' }],
  });
  const seoCrawl = await send('POST', `/seo/sites/${text(seoSite.id)}/crawl`, 202, { max_pages: 1 });

  const ids: WorldIds = {
    contact: text(contact.id),
    company: text(company.id),
    post: text(post.id),
    postSlug: text(post.slug),
    subscriber: text(subscriber.id),
    form: text(form.id),
    formSlug: text(form.slug),
    submission: text(submission.id),
    customer: integer(customer.id),
    invoice: integer(draft.id),
    draftInvoice: integer(secondDraft.id),
    payment: integer(payment.id),
    refund: integer(refund.id),
    approvalPolicy: integer(approvalPolicy.id),
    approval: integer(held.approval_instance_id),
    user: text(user.id),
    session: text((login.session as Data).jti),
    verificationToken: text(verification.token),
    product: text(product.id),
    price: text(price.id),
    coupon: text(coupon.id),
    couponCode,
    subscription: text(subscription.id),
    checkoutSession,
    paymentLink,
    paidCheckoutSession,
    paymentRefund,
    webhookEndpoint: text(webhookEndpoint.id),
    webhookDelivery: text(ping.id),
    webhookEvent: text(ping.event_id),
    appointmentResource: text(appointmentResource.id),
    appointmentAsset: text(appointmentAsset.id),
    appointmentBooking: text(appointmentBooking.id),
    appointmentCustomField: text(appointmentCustomField.id),
    taskCategory: integer(taskCategory.id),
    task: integer(task.id),
    taskAssignment: integer(taskAssignment!.id),
    taskSubmission: integer(taskSubmission.id),
    taskChecklistItem: 'world-item',
    taskLink: integer(taskLink.id),
    outreachSequence: text(outreachSequence.id),
    outreachEnrollment: text(outreachEnrollment.id),
    outreachSuppression: text(outreachSuppression.id),
    outreachMessage: text((outreachInbound.message as Data).id),
    affiliateProgramme: text(affiliateProgramme.id),
    affiliateTier: text(affiliateTier.id),
    affiliatePartner: text(affiliatePartner.id),
    affiliateReferral: text(affiliateReferral.id),
    affiliateConversion: text(affiliateConversion.id),
    socialAccount,
    socialFile: text(socialFile.file_id),
    socialPost,
    seoSite: text(seoSite.id),
    seoQuestion: text((seoAdded.questions as Data[])[0]!.id),
    seoCompetitor: text(seoCompetitor.id),
    seoCrawl: text(seoCrawl.id),
  };
  return { tag, key, ids, skipped, fillPath: (template, overrides) => fillPath(template, ids, overrides) };
}

/** Which id a path parameter means, by the collection segment just before it (per service). */
const RESOURCE_BEFORE_PARAMETER: Record<string, keyof IdOverrides> = {
  'crm/contacts': 'contact',
  'crm/companies': 'company',
  'blogs/posts': 'post',
  'blogs/published': 'postSlug',
  'blogs/subscribers': 'subscriber',
  'forms/forms': 'form',
  'forms/by-slug': 'formSlug',
  'forms/submissions': 'submission',
  'invoicing/customers': 'customer',
  'invoicing/invoices': 'invoice',
  'invoicing/refunds': 'refund',
  'invoicing/approval-policies': 'approvalPolicy',
  'invoicing/approvals': 'approval',
  'customer-auth/users': 'user',
  'customer-auth/sessions': 'session',
  'catalog/products': 'product',
  'catalog/coupons': 'coupon',
  'catalog/subscriptions': 'subscription',
  'payments/checkout-sessions': 'checkoutSession',
  'payments/payment-links': 'paymentLink',
  'payments/refunds': 'paymentRefund',
  'webhooks/endpoints': 'webhookEndpoint',
  'webhooks/deliveries': 'webhookDelivery',
  'webhooks/events': 'webhookEvent',
  'appointments/resources': 'appointmentResource',
  'appointments/assets': 'appointmentAsset',
  'appointments/bookings': 'appointmentBooking',
  'appointments/custom-fields': 'appointmentCustomField',
  'tasks/categories': 'taskCategory',
  'tasks/tasks': 'task',
  'tasks/assignments': 'taskAssignment',
  'tasks/submissions': 'taskSubmission',
  'tasks/checklist': 'taskChecklistItem',
  'tasks/links': 'taskLink',
  'outreach/sequences': 'outreachSequence',
  'outreach/enrollments': 'outreachEnrollment',
  'outreach/suppressions': 'outreachSuppression',
  'outreach/messages': 'outreachMessage',
  'affiliates/programmes': 'affiliateProgramme',
  'affiliates/tiers': 'affiliateTier',
  'affiliates/affiliates': 'affiliatePartner',
  'affiliates/referrals': 'affiliateReferral',
  'affiliates/conversions': 'affiliateConversion',
  'social/accounts': 'socialAccount',
  'social/files': 'socialFile',
  'social/posts': 'socialPost',
  'seo/sites': 'seoSite',
  'seo/questions': 'seoQuestion',
  'seo/competitors': 'seoCompetitor',
  'seo/crawls': 'seoCrawl',
  'admin/tenants': 'tenant',
  'admin/api-keys': 'apiKey',
};

/**
 * Fills `{param}` segments of an OpenAPI path template with the world's ids: the resource is
 * the one named by the segment before the parameter, and a parameter called `slug` takes
 * that resource's slug. Anything unknown gets a random UUID, which must then answer 404.
 */
export function fillPath(template: string, ids: Partial<WorldIds>, overrides: IdOverrides = {}): string {
  const segments = template.split('/');
  const service = template.startsWith('/admin/') ? 'admin' : (segments[segments.indexOf('services') + 1] ?? '');
  return segments
    .map((segment, index) => {
      const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
      if (!parameter) return segment;
      let resource = RESOURCE_BEFORE_PARAMETER[`${service}/${segments[index - 1]}`];
      if (resource && parameter === 'slug' && !resource.endsWith('Slug')) resource = `${resource}Slug` as keyof IdOverrides;
      const value = resource === undefined ? undefined : ((overrides as Record<string, unknown>)[resource] ?? (ids as Record<string, unknown>)[resource]);
      return encodeURIComponent(String(value ?? randomUUID()));
    })
    .join('/');
}

/** Pays a test-mode session on its hosted page with Stripe's 4242 test card, as a browser submits the form. */
async function payCheckoutSession(app: FastifyInstance, sessionId: string): Promise<void> {
  const page = await app.inject({ method: 'GET', url: `/checkout/${sessionId}` });
  const token = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1];
  if (!token) throw new Error(`world: the checkout page of ${sessionId} has no form (${page.statusCode})`);
  const form = { cardholder_name: 'World Buyer', card_number: '4242 4242 4242 4242', card_expiry: '12/34', card_cvc: '123', csrf_token: token };
  const paid = await app.inject({
    method: 'POST',
    url: `/checkout/${sessionId}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
  if (paid.statusCode !== 303) throw new Error(`world: paying ${sessionId} answered ${paid.statusCode}: ${paid.body.slice(0, 300)}`);
}

function expectStatus(response: Response, expected: number, what: string): Data {
  if (response.statusCode !== expected) {
    throw new Error(`world: ${what} answered ${response.statusCode}, expected ${expected}: ${response.body.slice(0, 300)}`);
  }
  return response.json().data;
}

function slugOf(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'world'
  );
}
