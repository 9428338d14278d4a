import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { Nullable, Timestamp, TimestampField, Uuid } from '../../platform/http/schemas.js';

export const MAX_ENABLED_EVENTS = 100;
/** Of each attempt's reply body, this many bytes are kept. */
export const RESPONSE_BODY_BYTES = 1024;
/** Attempts shown per delivery, newest kept. */
export const MAX_ATTEMPTS_SHOWN = 50;

const EventPattern = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(\\*|[a-z][a-z_]*\\.\\*|[a-z][a-z_]*\\.[a-z][a-z_]*\\.[a-z][a-z_]*)$',
  description: 'An event type, `<service>.*` for every type of a service, or `*` for every type.',
  examples: ['invoicing.invoice.paid'],
});

const EndpointUrl = Type.String({
  format: 'uri',
  minLength: 1,
  maxLength: 2048,
  description: 'Where events are POSTed: https, or http with a test-mode key. Private, loopback and link-local targets are refused when delivering.',
  examples: ['https://example.com/hooks/platform'],
});

const Description = Type.String({ maxLength: 500, description: 'What this endpoint is for; free text.' });

const endpointProperties = {
  id: Uuid,
  url: Type.String({ maxLength: 2048, description: 'Where events are POSTed.', examples: ['https://example.com/hooks/platform'] }),
  description: Nullable(Type.String({ maxLength: 500, description: 'What this endpoint is for.', examples: ['Accounting system'] })),
  enabled_events: Type.Array(Type.String({ maxLength: 100 }), {
    maxItems: MAX_ENABLED_EVENTS,
    description: 'Types, `<service>.*` prefixes or `*`.',
    examples: [['invoicing.*', 'forms.submission.created']],
  }),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], {
    description: 'Disabled endpoints receive nothing (by PATCH, or after three days of failed attempts).',
    examples: ['enabled'],
  }),
  disabled_reason: Nullable(
    Type.Union([Type.Literal('manual'), Type.Literal('failing')], { description: '`failing`: three days of attempts without a single success; `manual`: set by PATCH.' }),
  ),
  livemode: Type.Boolean({ description: 'Whether the endpoint receives live-mode events (else test-mode ones).', examples: [false] }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookEndpoint = Type.Object(endpointProperties, { title: 'WebhookEndpoint', additionalProperties: false });

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...endpointProperties,
    secret: Type.String({
      maxLength: 64,
      description: 'The signing secret, `whsec_` + base64 of 24 random bytes. Shown only here: store it now.',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  },
  { title: 'WebhookEndpointWithSecret', additionalProperties: false },
);

export const CreateEndpointBody = Type.Object(
  {
    url: EndpointUrl,
    enabled_events: Type.Array(EventPattern, { minItems: 1, maxItems: MAX_ENABLED_EVENTS, description: 'Which events to send: types, `<service>.*` prefixes, or `["*"]`.' }),
    description: Type.Optional(Nullable(Description)),
  },
  { additionalProperties: false, examples: [{ url: 'https://example.com/hooks/platform', enabled_events: ['invoicing.*', 'forms.submission.created'] }] },
);

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    enabled_events: Type.Optional(Type.Array(EventPattern, { minItems: 1, maxItems: MAX_ENABLED_EVENTS })),
    description: Type.Optional(Nullable(Description)),
    status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], { description: 'Enabling an endpoint again clears its failure record.' })),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ status: 'enabled' }] },
);

export const ListEndpointsQuery = ListQuery({});

export const WebhookEvent = Type.Object(
  {
    id: Type.String({ ...Uuid, description: 'The event id; also the `webhook-id` header of its deliveries.' }),
    type: Type.String({ maxLength: 100, description: 'What happened: `<service>.<resource>.<verb>`.', examples: ['invoicing.invoice.paid'] }),
    created_at: Timestamp,
    livemode: Type.Boolean({ description: 'Whether the change happened in live mode.', examples: [false] }),
    data: Type.Object(
      {
        object: Type.Object({}, { additionalProperties: true, description: 'The resource as its GET returns it, at the time of the event.' }),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'WebhookEvent', additionalProperties: false },
);

export const ListEventsQuery = ListQuery({
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only events of this type.', examples: ['forms.submission.created'] })),
  created_after: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only events created after this instant.' })),
  created_before: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only events created before this instant.' })),
});

export const EventType = Type.Object(
  {
    type: Type.String({ maxLength: 100, examples: ['payments.checkout_session.completed'] }),
    service: Type.String({ maxLength: 40, description: 'The service that records it, as in its URLs.', examples: ['payments'] }),
    description: Type.String({ maxLength: 500, description: 'When it is recorded.', examples: ['A checkout session was paid.'] }),
  },
  { title: 'EventType', additionalProperties: false },
);

export const ListEventTypesQuery = ListQuery({});

const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
  description: '`pending`: an attempt is due or scheduled; `succeeded`: a 2xx reply; `failed`: the retry schedule is spent or the endpoint is disabled.',
});

const attemptOutcome = {
  status_code: Nullable(
    Type.Integer({ format: 'int32', minimum: 100, maximum: 599, description: 'The HTTP status the receiver answered; null when no reply came.', examples: [200] }),
  ),
  duration_ms: Nullable(Type.Integer({ format: 'int32', minimum: 0, maximum: 3_600_000, description: 'How long the attempt took.', examples: [42] })),
  error: Nullable(
    Type.String({ maxLength: 500, description: 'Why the attempt failed, when it did.', examples: ['The receiver answered 500; only a 2xx reply counts as received.'] }),
  ),
  response_body: Nullable(Type.String({ maxLength: RESPONSE_BODY_BYTES, description: 'The first 1 KB of the reply body.', examples: ['ok'] })),
};

export const DeliveryAttempt = Type.Object(
  { attempted_at: Timestamp, ...attemptOutcome, manual: Type.Boolean({ description: 'Sent by a manual retry.', examples: [false] }) },
  { title: 'WebhookDeliveryAttempt', additionalProperties: false },
);

export const WebhookDelivery = Type.Object(
  {
    id: Uuid,
    endpoint_id: Uuid,
    event_id: Uuid,
    event_type: Type.String({ maxLength: 100, examples: ['forms.submission.created'] }),
    status: DeliveryStatus,
    attempt_count: Type.Integer({ format: 'int32', minimum: 0, maximum: 10_000, description: 'Attempts made so far, manual ones included.', examples: [1] }),
    next_attempt_at: Nullable(TimestampField('When the next attempt (the next retry) is due; null when none is.')),
    last_attempt_at: Nullable(TimestampField('When the last attempt was sent.')),
    ...attemptOutcome,
    attempts: Type.Array(DeliveryAttempt, { maxItems: MAX_ATTEMPTS_SHOWN, description: 'Every attempt, oldest first (the last 50).' }),
    created_at: Timestamp,
  },
  { title: 'WebhookDelivery', additionalProperties: false },
);

export const ListDeliveriesQuery = ListQuery({
  status: Type.Optional(DeliveryStatus),
  event_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only deliveries of this event.' })),
});

export const Deleted = Type.Object({ id: Uuid, deleted: Type.Literal(true) }, { title: 'DeletedObject', additionalProperties: false });

export type WebhookEndpointView = Static<typeof WebhookEndpoint>;
export type WebhookEndpointWithSecretView = Static<typeof WebhookEndpointWithSecret>;
export type CreateEndpointInput = Static<typeof CreateEndpointBody>;
export type UpdateEndpointInput = Static<typeof UpdateEndpointBody>;
export type WebhookDeliveryView = Static<typeof WebhookDelivery>;
export type DeliveryAttemptView = Static<typeof DeliveryAttempt>;
