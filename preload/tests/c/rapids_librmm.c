/* A stand-in for RAPIDS's librmm.so: the SONAME librmm.so (given by the test's link line)
 * and symbols of its own, a type-info object of rmm's versioned namespace among them.
 * With -DMAIN, a program that uses it: it must load and run the same with
 * librmm_preload.so preloaded, which must not take the SONAME's place. */
#include <stdio.h>

#ifdef MAIN
extern const char _ZTIN3rmm10_RMM_26_109bad_allocE[];
int rmm_rapids_answer(void);
int main(void)
{
  printf("their librmm.so answers %d, type info %s\n",
         rmm_rapids_answer(),
         _ZTIN3rmm10_RMM_26_109bad_allocE);
  return 0;
}
#else
const char _ZTIN3rmm10_RMM_26_109bad_allocE[] = "rmm::_RMM_26_10::bad_alloc";
int rmm_rapids_answer(void) { return 2610; }
#endif
