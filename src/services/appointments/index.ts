import type { Owner } from '../../db/owned.js';
import { isUuid } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import type { ServiceModule } from '../module.js';
import { appointmentsRoutes } from './routes.js';
import { Asset, Booking, Resource, Schedule } from './schemas.js';
import { createAppointmentsService, type AppointmentsService } from './service.js';

export type { AppointmentsService } from './service.js';

declare module '../registry.js' {
  interface ServiceApis {
    appointments: AppointmentsService & BookingLookup;
  }
}

/** For links from other services (tasks): a booking's label (when it starts) and dashboard URL, or null when there is no such booking. */
export interface BookingLookup {
  describeRecord(owner: Owner, id: string): Promise<{ label: string; url: string } | null>;
}

function withBookingLookup(service: AppointmentsService): AppointmentsService & BookingLookup {
  return Object.assign(service, {
    async describeRecord(owner: Owner, id: string) {
      if (!isUuid(id)) return null;
      try {
        const booking = await service.getBooking(owner as RequestContext, id.toLowerCase());
        return { label: `Booking ${new Date(booking.starts_at).toISOString()}`, url: `/dashboard/appointments/bookings/${booking.id}` };
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return null;
        throw error;
      }
    },
  });
}

/** Bookable resources, the assets visits are about, and bookings that never exceed a resource's capacity. */
export const appointmentsModule: ServiceModule<AppointmentsService> = {
  id: 'appointments',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'appointments.resource.created', description: 'A bookable resource was created.', object: Resource },
    { type: 'appointments.resource.updated', description: 'A resource was updated.', object: Resource },
    { type: 'appointments.resource.deleted', description: 'A resource without bookings was deleted; the object is the resource as it was.', object: Resource },
    { type: 'appointments.schedule.updated', description: 'The working hours of a resource were replaced.', object: Schedule },
    { type: 'appointments.asset.created', description: 'An asset was created.', object: Asset },
    { type: 'appointments.asset.updated', description: 'An asset was updated.', object: Asset },
    { type: 'appointments.asset.deleted', description: 'An asset was deleted; the object is the asset as it was.', object: Asset },
    { type: 'appointments.booking.created', description: 'A booking was made.', object: Booking },
    { type: 'appointments.booking.rescheduled', description: 'A booking moved to a new starts_at / ends_at.', object: Booking },
    { type: 'appointments.booking.cancelled', description: 'A booking was cancelled; its place is free again.', object: Booking },
    { type: 'appointments.booking.status_changed', description: 'A booking became confirmed, completed or no_show.', object: Booking },
  ],
  create: (deps) => withBookingLookup(createAppointmentsService(deps)),
  routes: appointmentsRoutes,
};
