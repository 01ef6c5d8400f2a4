// Shims for BlueZ (libbluetooth) RFCOMM client sockets.
#ifndef GLASSES_CBLUEZ_SHIM_H
#define GLASSES_CBLUEZ_SHIM_H

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/rfcomm.h>

/// The address family of Bluetooth sockets (AF_BLUETOOTH is a macro).
static inline int cbluez_af_bluetooth(void) { return AF_BLUETOOTH; }
/// The RFCOMM protocol number (BTPROTO_RFCOMM is a macro).
static inline int cbluez_btproto_rfcomm(void) { return BTPROTO_RFCOMM; }

#endif
