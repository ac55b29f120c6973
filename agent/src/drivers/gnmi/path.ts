/** gNMI path strings: the parser lives in shared/ (the controller checks deployment target paths with it too). */
export { formatPath, parsePath, PathSyntaxError, type GnmiPath, type PathElem } from '../../../../shared/src/device/gnmi-path';
