export {
  netconfDriver,
  createNetconfDriver,
  NetconfSession,
  type NetconfDriver,
  type NetconfDriverOptions,
  type NetconfDeviceSession,
} from './driver';
export {
  NetconfClient,
  CAP,
  NS_BASE,
  YUMA_MYSESSION,
  maskSecrets,
  rpcErrors,
  describeRpcError,
  type RpcErrorDetail,
  type NetconfConnectOptions,
} from './client';
export { FrameDecoder, FramingError, encodeMessage, EOM, type Framing } from './framing';
export { buildEditContent } from './edit';
