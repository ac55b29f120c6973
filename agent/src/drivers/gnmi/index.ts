export {
  gnmiDriver,
  createGnmiDriver,
  channelAddress,
  GnmiSession,
  buildSetRequest,
  grpcError,
  decodeTypedValue,
  toProtoPath,
  fromProtoPath,
} from './driver';
export type {
  GnmiDriver,
  GnmiDriverOptions,
  CapabilityResponse,
  ProtoPath,
  ProtoTypedValue,
  ProtoUpdate,
  ProtoNotification,
  SetRequest,
} from './driver';
export { parsePath, formatPath, PathSyntaxError, type GnmiPath, type PathElem } from './path';
export { canonicalJson, getAt, setAt, deleteAt, deepMerge, TreeError, type Json, type JsonObject } from './json-tree';
export { gnmiService, PROTO_DIR } from './proto';
