#include <stdio.h>
int main(void) { puts("placeholder"); return 0; }
