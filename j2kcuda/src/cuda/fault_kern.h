/*
 * The parameters of the fault injection's kernel (fault_kern.cu), filled by cuda_fault.cu.
 */
#ifndef J2KI_FAULT_KERN_H
#define J2KI_FAULT_KERN_H

/** J2KI_K_FAULT_TRAP: nothing to read (one member: a struct of C has one at least). */
typedef struct J2kiFaultTrapParams {
    int unused;
} J2kiFaultTrapParams;

#endif /* J2KI_FAULT_KERN_H */
