import { string } from 'yup';
import { strictObject } from './validation';

/** `{id}` path segments: opaque, but never longer than any id this service issues. */
export const idParams = strictObject({ id: string().required().max(100) });
