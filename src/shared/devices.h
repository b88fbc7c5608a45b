/*-------------------------------------------------------------------------
 *
 * devices.h
 *	  The temporary files' devices and their pace, remembered across
 *	  spills (devices.c).
 *
 * IDENTIFICATION
 *	  src/shared/devices.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_DEVICES_H
#define COMPSPILL_DEVICES_H

extern void CompSpillDevicesShmemRequest(void);
extern void CompSpillDevicesShmemInit(void);
extern bool CompSpillDeviceRecall(uint64 dev, double *ns_per_byte,
								  double *headroom);
extern void CompSpillDeviceRemember(uint64 dev, double ns_per_byte,
									double headroom);

#endif							/* COMPSPILL_DEVICES_H */
