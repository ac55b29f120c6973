/** Loads proto/gnmi.proto (with gnmi_ext.proto) once per process. */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const PROTO_DIR = fileURLToPath(new URL('../../../../proto/', import.meta.url));

let cached: grpc.ServiceClientConstructor | undefined;

/** The generated gNMI service client constructor; `.service` is the definition for servers. */
export function gnmiService(): grpc.ServiceClientConstructor {
  if (cached) return cached;
  const def = protoLoader.loadSync('gnmi.proto', {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { gnmi: { gNMI: grpc.ServiceClientConstructor } };
  cached = pkg.gnmi.gNMI;
  return cached;
}
