/**
 * The PostgreSQL NOTIFY channel of the live stream (the live area listens; triggers and other
 * areas notify on it). Here, below every area, so that an area telling the live stream something
 * does not depend on the live area itself.
 */
export const LIVE_CHANNEL = 'sb_live';

/**
 * The notification on LIVE_CHANNEL that says some users' sessions or permissions changed
 * (`{"type":"access","user_ids":[...]}`, auth/auth-store.ts announceAccessChange): never streamed,
 * it makes their connections check their access again.
 */
export const ACCESS_EVENT = 'access';
