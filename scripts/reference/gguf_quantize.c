/* Quantizes a GGUF model with llama.cpp's own quantizer (libllama's llama_model_quantize),
 * for the GGUF reference data (make_gguf_reference.sh): gguf_quantize IN.gguf OUT.gguf FTYPE
 * where FTYPE is llama.cpp's llama_ftype number (2 Q4_0, 7 Q8_0, 9 Q5_1, 15 Q4_K_M,
 * 17 Q5_K_M, 18 Q6_K). Built against the llama.h of node-llama-cpp's llama.cpp release. */
#include <stdio.h>
#include <stdlib.h>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: gguf_quantize IN.gguf OUT.gguf FTYPE\n");
    return 2;
  }
  llama_backend_init();
  llama_model_quantize_params params = llama_model_quantize_default_params();
  params.ftype = (enum llama_ftype)atoi(argv[3]);
  params.nthread = 1;
  const unsigned status = llama_model_quantize(argv[1], argv[2], &params);
  llama_backend_free();
  return status == 0 ? 0 : 1;
}
