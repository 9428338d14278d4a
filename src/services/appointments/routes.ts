import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply, IdParams, IntegerIdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  Asset,
  Availability,
  AvailabilityQuery,
  PutScheduleBody,
  Schedule,
  Booking,
  CreateCustomFieldBody,
  CustomField,
  ListCustomFieldsQuery,
  CreateAssetBody,
  CreateBookingBody,
  CreateResourceBody,
  Deleted,
  DeletedCustomField,
  ListAssetsQuery,
  ListBookingsQuery,
  ListResourcesQuery,
  Resource,
  UpdateAssetBody,
  UpdateBookingBody,
  UpdateResourceBody,
} from './schemas.js';
import type { AppointmentsService } from './service.js';

const VIEW = 'service.appointments.view';
const MANAGE = 'service.appointments.manage';

const STALE = ErrorReply('stale_update: the object changed since expected_updated_at.');

export function appointmentsRoutes(appointments: AppointmentsService) {
  return async function registerAppointmentsRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const resources = { tags: ['Appointments: resources'] };
    const assets = { tags: ['Appointments: assets'] };
    const bookings = { tags: ['Appointments: bookings'] };

    // Resources

    routes.post('/resources', {
      config: { scope: MANAGE },
      schema: {
        ...resources,
        operationId: 'appointmentsCreateResource',
        summary: 'Create a bookable resource',
        body: CreateResourceBody,
        response: { 201: DataEnvelope(Resource) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await appointments.createResource(requestContext(request), request.body) };
      },
    });

    routes.get('/resources', {
      config: { scope: VIEW },
      schema: {
        ...resources,
        operationId: 'appointmentsListResources',
        summary: 'List resources, newest first',
        querystring: ListResourcesQuery,
        response: { 200: ListEnvelope(Resource) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await appointments.listResources(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/resources/:id', {
      config: { scope: VIEW },
      schema: { ...resources, operationId: 'appointmentsGetResource', summary: 'Fetch a resource', params: IntegerIdParams, response: { 200: DataEnvelope(Resource) } },
      handler: async (request) => ({ data: await appointments.getResource(requestContext(request), request.params.id) }),
    });

    routes.patch('/resources/:id', {
      config: { scope: MANAGE },
      schema: {
        ...resources,
        operationId: 'appointmentsUpdateResource',
        summary: 'Update a resource (name required)',
        params: IntegerIdParams,
        body: UpdateResourceBody,
        response: { 200: DataEnvelope(Resource), 409: STALE },
      },
      handler: async (request) => ({ data: await appointments.updateResource(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/resources/:id', {
      config: { scope: MANAGE },
      schema: {
        ...resources,
        operationId: 'appointmentsDeleteResource',
        summary: 'Delete a resource without bookings',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Deleted), 409: ErrorReply('resource_in_use: the resource has bookings; deactivate it instead.') },
      },
      handler: async (request) => ({ data: await appointments.deleteResource(requestContext(request), request.params.id) }),
    });

    routes.get('/resources/:id/schedule', {
      config: { scope: VIEW },
      schema: {
        ...resources,
        operationId: 'appointmentsGetSchedule',
        summary: 'Fetch the working hours of a resource',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Schedule) },
      },
      handler: async (request) => ({ data: await appointments.getSchedule(requestContext(request), request.params.id) }),
    });

    routes.put('/resources/:id/schedule', {
      config: { scope: MANAGE },
      schema: {
        ...resources,
        operationId: 'appointmentsPutSchedule',
        summary: 'Replace the working hours of a resource (weekly hours in its zone plus date overrides)',
        params: IntegerIdParams,
        body: PutScheduleBody,
        response: { 200: DataEnvelope(Schedule), 409: STALE },
      },
      handler: async (request) => ({ data: await appointments.putSchedule(requestContext(request), request.params.id, request.body) }),
    });

    routes.get('/availability', {
      config: { scope: VIEW },
      schema: {
        tags: ['Appointments: availability'],
        operationId: 'appointmentsAvailability',
        summary: 'Free slots of a duration across matching resources (UTC instants with local times)',
        querystring: AvailabilityQuery,
        response: { 200: DataEnvelope(Availability) },
      },
      handler: async (request) => ({ data: await appointments.availability(requestContext(request), request.query) }),
    });

    // Custom field definitions

    const fields = { tags: ['Appointments: custom fields'] };
    routes.post('/custom-fields', {
      config: { scope: MANAGE },
      schema: {
        ...fields,
        operationId: 'appointmentsCreateCustomField',
        summary: 'Define a custom field of resources or assets',
        body: CreateCustomFieldBody,
        response: { 201: DataEnvelope(CustomField), 409: ErrorReply('conflict: a field with this key exists for the same applies_to.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await appointments.createCustomField(requestContext(request), request.body) };
      },
    });

    routes.get('/custom-fields', {
      config: { scope: VIEW },
      schema: {
        ...fields,
        operationId: 'appointmentsListCustomFields',
        summary: 'List custom field definitions, newest first',
        querystring: ListCustomFieldsQuery,
        response: { 200: ListEnvelope(CustomField) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await appointments.listCustomFields(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.delete('/custom-fields/:id', {
      config: { scope: MANAGE },
      schema: {
        ...fields,
        operationId: 'appointmentsDeleteCustomField',
        summary: 'Delete a custom field definition (values already stored stay)',
        params: IdParams,
        response: { 200: DataEnvelope(DeletedCustomField) },
      },
      handler: async (request) => ({ data: await appointments.deleteCustomField(requestContext(request), request.params.id) }),
    });

    // Assets

    routes.post('/assets', {
      config: { scope: MANAGE },
      schema: { ...assets, operationId: 'appointmentsCreateAsset', summary: 'Create an asset', body: CreateAssetBody, response: { 201: DataEnvelope(Asset) } },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await appointments.createAsset(requestContext(request), request.body) };
      },
    });

    routes.get('/assets', {
      config: { scope: VIEW },
      schema: { ...assets, operationId: 'appointmentsListAssets', summary: 'List assets, newest first', querystring: ListAssetsQuery, response: { 200: ListEnvelope(Asset) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await appointments.listAssets(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/assets/:id', {
      config: { scope: VIEW },
      schema: { ...assets, operationId: 'appointmentsGetAsset', summary: 'Fetch an asset', params: IntegerIdParams, response: { 200: DataEnvelope(Asset) } },
      handler: async (request) => ({ data: await appointments.getAsset(requestContext(request), request.params.id) }),
    });

    routes.patch('/assets/:id', {
      config: { scope: MANAGE },
      schema: {
        ...assets,
        operationId: 'appointmentsUpdateAsset',
        summary: 'Update an asset (name and kind required)',
        params: IntegerIdParams,
        body: UpdateAssetBody,
        response: { 200: DataEnvelope(Asset), 409: STALE },
      },
      handler: async (request) => ({ data: await appointments.updateAsset(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/assets/:id', {
      config: { scope: MANAGE },
      schema: {
        ...assets,
        operationId: 'appointmentsDeleteAsset',
        summary: 'Delete an asset without children or bookings',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Deleted), 409: ErrorReply('asset_in_use: the asset contains other assets or has bookings.') },
      },
      handler: async (request) => ({ data: await appointments.deleteAsset(requestContext(request), request.params.id) }),
    });

    // Bookings

    routes.post('/bookings', {
      config: { scope: MANAGE },
      schema: {
        ...bookings,
        operationId: 'appointmentsCreateBooking',
        summary: 'Book a resource',
        body: CreateBookingBody,
        response: { 201: DataEnvelope(Booking), 409: ErrorReply('slot_unavailable: the resource is fully booked for this time.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await appointments.createBooking(requestContext(request), request.body) };
      },
    });

    routes.get('/bookings', {
      config: { scope: VIEW },
      schema: {
        ...bookings,
        operationId: 'appointmentsListBookings',
        summary: 'List bookings, latest start first',
        querystring: ListBookingsQuery,
        response: { 200: ListEnvelope(Booking) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await appointments.listBookings(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/bookings/:id', {
      config: { scope: VIEW },
      schema: { ...bookings, operationId: 'appointmentsGetBooking', summary: 'Fetch a booking', params: IdParams, response: { 200: DataEnvelope(Booking) } },
      handler: async (request) => ({ data: await appointments.getBooking(requestContext(request), request.params.id) }),
    });

    routes.patch('/bookings/:id', {
      config: { scope: MANAGE },
      schema: {
        ...bookings,
        operationId: 'appointmentsUpdateBooking',
        summary: 'Reschedule, cancel or change the status of a booking',
        params: IdParams,
        body: UpdateBookingBody,
        response: {
          200: DataEnvelope(Booking),
          409: ErrorReply(
            'slot_unavailable: the new time is fully booked; invalid_status_transition: the status cannot change that way; stale_update: the booking changed since expected_updated_at.',
          ),
        },
      },
      handler: async (request) => ({ data: await appointments.updateBooking(requestContext(request), request.params.id, request.body) }),
    });
  };
}
