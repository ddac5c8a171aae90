#ifndef COURIER_CLIBXML2_SHIM_H
#define COURIER_CLIBXML2_SHIM_H
/* Debian builds libxml2 with ICU, so <libxml/encoding.h> pulls in the system's <unicode/ucnv.h>, whose types
 * clash with Foundation's own ICU module in any Swift file that sees both. Courier never touches the ICU
 * members (the last two pointers of xmlCharEncodingHandler, which it never allocates or reads), so the
 * headers are read without them. */
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/SAX2.h>
#include <libxml/xmlsave.h>
#include <libxml/xmlwriter.h>
#include <libxml/globals.h>

/// The calling thread's libxml2 error handlers, saved while Courier parses.
typedef struct {
    xmlGenericErrorFunc generic;
    void *genericContext;
    xmlStructuredErrorFunc structured;
    void *structuredContext;
} CourierXMLErrorHandlers;

/// A generic (printf-style) error handler that prints nothing. Swift cannot form variadic C function
/// pointers, so it lives here.
static void __attribute__((unused)) courier_xml_ignore_generic_error(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

/// Routes every libxml2 error raised on this thread, including those raised outside a parser context
/// (encoding conversion), to `handler`, and silences the generic (stderr) channel. libxml2 keeps these
/// handlers per thread. Returns the previous handlers for courier_xml_restore_errors.
static inline CourierXMLErrorHandlers courier_xml_capture_errors(xmlStructuredErrorFunc handler, void *context) {
    CourierXMLErrorHandlers saved;
    saved.generic = xmlGenericError;
    saved.genericContext = xmlGenericErrorContext;
    saved.structured = xmlStructuredError;
    saved.structuredContext = xmlStructuredErrorContext;
    xmlSetGenericErrorFunc(NULL, courier_xml_ignore_generic_error);
    xmlSetStructuredErrorFunc(context, handler);
    return saved;
}

/// Puts back the handlers courier_xml_capture_errors replaced.
static inline void courier_xml_restore_errors(CourierXMLErrorHandlers saved) {
    xmlSetGenericErrorFunc(saved.genericContext, saved.generic);
    xmlSetStructuredErrorFunc(saved.structuredContext, saved.structured);
}
#endif
