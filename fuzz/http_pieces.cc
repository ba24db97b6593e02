// fuzz/http_pieces.cc: the http target with the bytes delivered in pieces of random sizes,
// each answer compared with the one the same bytes get read whole (fuzz/http.cc).
#define PLUGBOARD_FUZZ_HTTP_PIECES 1
#include "fuzz/http.cc"
