#ifndef COURIER_CPROTOBUFC_SHIM_H
#define COURIER_CPROTOBUFC_SHIM_H
#include <protobuf-c/protobuf-c.h>
#endif
