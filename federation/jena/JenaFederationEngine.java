/*
 * Federation engine `jena` of fkgqa: Apache Jena ARQ (Debian's libapache-jena-java, 4.5.0) as a
 * long-lived JVM process driven by fkgqa (src/federation/jena/engine.ts) over stdin/stdout. fkgqa
 * compiles it once with javac into a cache folder; without javac it runs as a single-file source
 * program (JEP 330):
 *
 *   java -cp <Jena and dependency jars>:<writable dir> federation/jena/JenaFederationEngine.java <writable dir>
 *
 * Protocol: JSON lines (UTF-8), one object per line.
 *   Node -> engine
 *     {"op":"init","endpoints":["http://…/sparql", …],"maxDecodedBytes":B}  the registry (first); B: the answer limit of an encoded answer, decoded
 *     {"op":"query","id":N,"query":"…","mediaType":"…","timeoutMs":T,"graceMs":G}  G: how long fkgqa waits past T for due answers (HTTP and ARQ timeouts are T+G; Fkgqa-Timeout counts from T)
 *     {"op":"cancel","id":N}                                  stop query N (time limit or abort)
 *   engine -> Node
 *     {"type":"ready","jena":"4.5.0","java":"17…"}            after init
 *     {"type":"request","id":N,"endpoint":"…"}                before each HTTP request of query N
 *     {"type":"answered","id":N,"fault":{…}}                  that request has its status line or failed; fault: a 503 with Fkgqa-Stopped,
 *                                                             with the Fkgqa-Timeout it carried (sentLimitMs) and the ms from sending to its status line (elapsedMs)
 *     {"type":"result","id":N,"body":"…","contentType":"…"}
 *     {"type":"error","id":N,"error":"…","httpStatus":S}     httpStatus only when an HTTP status caused it; then errorBody (the answer's
 *                                                             start) and errorEndpoint (the endpoint that answered it)
 *     {"type":"cancelled","id":N}                             query N's thread has ended after a cancel
 *     {"type":"fatal","error":"…"}                            a protocol error; the process exits 3
 * End of stdin (Node exited or closed the pipe) ends the process.
 *
 * Evaluation: ARQ's standard engine with the index-join strategy off (context symbol
 * ARQ.optIndexJoinStrategy = false) and the filter implicit-join rewrite off
 * (ARQ.optFilterImplicitJoin = false, a correctness fix: see runQuery), so a join or OPTIONAL of SERVICE clauses evaluates each side
 * once and joins locally (hash join) instead of re-sending the right-hand SERVICE for every
 * left-hand solution; each SERVICE clause is then one HTTP request, except inside FILTER (NOT)
 * EXISTS, which ARQ evaluates per solution. The local dataset is empty: fkgqa refuses queries with
 * triple patterns outside SERVICE before they reach this program. The function
 * urn:fkgqa:function:str (CanonicalStr), urn:fkgqa:function:divide (Divide) and urn:fkgqa:function:avg
 * (Average), which fkgqa puts in place of STR, `/` and AVG outside SERVICE (src/sparql/builtins.ts),
 * are registered before the first query.
 *
 * HTTP: every request of every query goes through GuardedHttpClient, installed as Jena's default
 * java.net.http.HttpClient (HttpEnv.setDftHttpClient), which enforces the rules of fkgqa's
 * send and fetchVia (src/common/http-client.ts) with the same messages: a URL outside the registry is
 * refused before sending, redirects are never followed (Redirect.NEVER, and a 3xx answer fails the
 * query), each request is reported to Node before it is sent, gets the query's remaining time as its
 * timeout, and is cancelled (its response stream closed) when the query is cancelled.
 */
import java.io.*;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

import org.apache.jena.atlas.json.JSON;
import org.apache.jena.atlas.json.JsonObject;
import org.apache.jena.atlas.json.JsonValue;
import org.apache.jena.http.HttpEnv;
import org.apache.jena.query.*;
import org.apache.jena.rdf.model.Model;
import org.apache.jena.riot.Lang;
import org.apache.jena.riot.RDFDataMgr;
import org.apache.jena.riot.resultset.ResultSetLang;
import org.apache.jena.sparql.algebra.op.OpService;
import org.apache.jena.sparql.engine.ExecutionContext;
import org.apache.jena.sparql.engine.QueryIterator;
import org.apache.jena.sparql.engine.binding.Binding;
import org.apache.jena.sparql.engine.http.QueryExceptionHTTP;
import org.apache.jena.sparql.engine.iterator.QueryIteratorWrapper;
import org.apache.jena.sparql.service.ServiceExecution;
import org.apache.jena.sparql.service.ServiceExecutorFactory;
import org.apache.jena.sparql.service.ServiceExecutorRegistry;
import org.apache.jena.sys.JenaSystem;

public class JenaFederationEngine {
    /** The state of one running query, reachable from its thread (for the HTTP client). */
    static final class QueryState {
        final long id;
        final long deadlineNanos;
        volatile boolean cancelled;
        volatile QueryExecution exec;
        volatile Thread thread;
        volatile Integer refusedStatus;
        /** The first endpoint that failed this query in its HTTP (an incomplete answer, a closed connection): reported with the error. */
        volatile JsonObject fault;
        /**
         * The first failure of a SERVICE clause that is not SILENT (ServiceGuard): it fails the query even where ARQ
         * evaluated the clause inside a FILTER (NOT) EXISTS, whose evaluation turns any exception into "false".
         */
        volatile RuntimeException serviceFailure;
        /** The start of the last error answer (HTTP 4xx/5xx) of an endpoint: Jena's message has only the status text. */
        volatile String errorBody;
        /** The endpoint that sent errorBody (the message names it, as comunica's "Invalid SPARQL endpoint response from …"). */
        volatile String errorEndpoint;
        final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
        final Set<InputStream> streams = ConcurrentHashMap.newKeySet();
        /** How long fkgqa waits past the query's limit for answers due (query op's graceMs): the HTTP and ARQ timeouts outlive the limit by it. */
        final long graceMs;
        QueryState(long id, long timeoutMs, long graceMs) { this.id = id; this.deadlineNanos = System.nanoTime() + timeoutMs * 1_000_000L; this.graceMs = graceMs; }
        long remainingMs() { return Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000L); }
        void cancel() {
            cancelled = true;
            QueryExecution e = exec;
            if (e != null) { try { e.abort(); } catch (RuntimeException ignored) {} }
            for (CompletableFuture<?> f : inFlight) f.cancel(true);
            for (InputStream s : streams) { try { s.close(); } catch (IOException ignored) {} }
            Thread t = thread;
            if (t != null) t.interrupt();
        }
    }

    static final ThreadLocal<QueryState> CURRENT = new ThreadLocal<>();
    static final Map<Long, QueryState> RUNNING = new ConcurrentHashMap<>();
    static volatile Set<String> allowed = Set.of();
    /** The answer limit of an encoded answer, decoded, in bytes (init's maxDecodedBytes; more is the endpoint's fault, as fkgqa's http.ts decodedTooLarge). */
    static volatile long maxDecodedBytes = 32L << 20;
    static final Object OUT_LOCK = new Object();
    static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

    /** The endpoint a request goes to: its URL without query string and fragment (as fkgqa's endpointOf; how requests are counted). */
    static String endpointOf(String url) {
        String u = url;
        int q = u.indexOf('?'); if (q >= 0) u = u.substring(0, q);
        int h = u.indexOf('#'); if (h >= 0) u = u.substring(0, h);
        return u;
    }

    /** An endpoint as the registry compares it: endpointOf without trailing slashes (as fkgqa's sameEndpoint). */
    static String endpointKey(String url) {
        String u = endpointOf(url);
        while (u.endsWith("/")) u = u.substring(0, u.length() - 1);
        return u;
    }

    /** A URL for a message: its query string (a whole SPARQL query, percent-encoded) shown as ?… (as fkgqa's RedirectRefused). */
    static String shown(String url) {
        return url.indexOf('?') >= 0 || url.indexOf('#') >= 0 ? endpointOf(url) + "?…" : url;
    }

    static void emit(JsonObject o) {
        String line = JSON.toStringFlat(o);
        synchronized (OUT_LOCK) { OUT.print(line); OUT.print('\n'); OUT.flush(); }
    }

    static JsonObject msg(String type, long id) {
        JsonObject o = new JsonObject();
        o.put("type", type);
        o.put("id", id);
        return o;
    }

    /** The SPARQL results types accepted from an endpoint: those that carry term types (not text/csv). */
    static final java.util.Set<String> RESULT_TYPES = java.util.Set.of("application/sparql-results+json", "application/sparql-results+xml", "text/tab-separated-values");
    /** The Accept header of a query sent to an endpoint (RESULT_TYPES). */
    static final String RESULTS_ACCEPT = "application/sparql-results+json, application/sparql-results+xml;q=0.9, text/tab-separated-values;q=0.7";

    /** java.net.http.HttpClient that enforces the registry, refuses redirects, counts and cancels. */
    static final class GuardedHttpClient extends HttpClient {
        /** Makes the client requests are sent with: a new one replaces it whenever an answer may leave a connection in its pool. */
        private final java.util.function.Supplier<HttpClient> factory;
        private volatile HttpClient real;
        GuardedHttpClient(java.util.function.Supplier<HttpClient> factory) { this.factory = factory; this.real = factory.get(); }

        /**
         * No connection is reused after its answer. Every request says `Connection: close`; an endpoint that
         * honours it answers `Connection: close`, and the JDK closes that connection. An answer without it
         * (an endpoint that ignores the request's header) is kept open in the pool of the client that got it,
         * which java.net.http hands to the next request to that host and port whatever its keep-alive
         * timeout (its pool drops expired connections only when its selector thread runs next): after bytes
         * past a Content-Length on a connection then kept silent, that request waited for its time limit.
         * So such a client is replaced when the answer's headers arrive, before its body is read and its
         * connection returned to that pool: later requests go out on new connections of the new client.
         */
        private <T> HttpResponse.BodyHandler<T> noReuse(HttpResponse.BodyHandler<T> handler, HttpClient used) {
            return info -> {
                // The JDK's own test (HttpConnection.closeOrReturnToCache): the first Connection header, exactly "close".
                boolean closes = info.headers().firstValue("connection").map(v -> v.equalsIgnoreCase("close")).orElse(false);
                if (!closes) renew(used);
                return handler.apply(info);
            };
        }

        /** Replaces `used` with a new client, once (a later answer of the same client finds it replaced). */
        private synchronized void renew(HttpClient used) {
            if (real == used) real = factory.get();
        }

        private HttpRequest admit(HttpRequest req, QueryState st) throws IOException {
            String url = req.uri().toString();
            if (!allowed.contains(endpointKey(url))) throw new IOException("refused to contact " + endpointOf(url) + ": not a registered endpoint");
            if (st != null && st.cancelled) throw new IOException("query cancelled");
            // Past the query's limit (fkgqa waits for answers due) nothing new is sent: a shard gets no query it could only stop at once.
            if (st != null && System.nanoTime() >= st.deadlineNanos) throw new IOException("the query's time limit ended: no request sent to " + endpointOf(url));
            if (st != null) emit(with(msg("request", st.id), "endpoint", endpointOf(url)));
            HttpRequest.Builder b = HttpRequest.newBuilder(req, (n, v) -> true);
            // Only result types that carry term types: Jena's default Accept also offers text/csv (plain strings:
            // a valid CSV answer joined to 0 rows), application/json, application/xml and */*.
            if (req.headers().firstValue("accept").map(a -> a.contains("sparql-results")).orElse(false)) b.setHeader("Accept", RESULTS_ACCEPT);
            // No content coding is asked for (fkgqa's http.ts DECODED_CODINGS: one rule on every route).
            b.setHeader("Accept-Encoding", "identity");
            // The endpoint closes the connection after its answer (noReuse).
            b.setHeader("Connection", "close");
            if (st != null) {
                long left = st.remainingMs();
                b.timeout(Duration.ofMillis(left + st.graceMs));
                // The time the query has left, less a margin (sentLimit of src/federation/limit.ts): fkgqa serve answers busy or its limit by then.
                b.setHeader("Fkgqa-Timeout", Long.toString(Math.max(1, left - Math.min(250, left / 10))));
            }
            return b.build();
        }

        /**
         * A 3xx fails the query with the message of fkgqa's RedirectRefused (src/common/http-client.ts); nothing is sent to the target.
         * `sent` is the request as sent (its Fkgqa-Timeout), `sentNanos` when it was sent (System.nanoTime): a stop carries both for
         * fkgqa's judgeStop (src/federation/limit.ts), which believes it only when it agrees with that limit and the clock.
         */
        private <T> HttpResponse<T> check(HttpResponse<T> res, QueryState st, HttpRequest sent, long sentNanos) throws IOException {
            long statusNanos = System.nanoTime();
            int s = res.statusCode();
            String stopped = s == 503 ? res.headers().firstValue("fkgqa-stopped").orElse(null) : null;
            JsonObject stop = null;
            if (stopped != null) {
                stop = fault(endpointOf(res.uri().toString()), "answered HTTP 503 (Fkgqa-Stopped: " + (stopped.length() > 200 ? stopped.substring(0, 200) : stopped) + ")", s, stopped);
                String limit = sent.headers().firstValue("Fkgqa-Timeout").orElse(null);
                if (limit != null) { try { stop.put("sentLimitMs", Long.parseLong(limit)); } catch (NumberFormatException ignored) {} }
                stop.put("elapsedMs", (System.nanoTime() - sentNanos) / 1_000_000L);
            }
            if (st != null && stop != null) recordFault(st, stop);
            // Reported at once, before ARQ reads the answer: a 503 at the limit the endpoint was sent is the verdict even when
            // fkgqa's own limit ends before ARQ fails the query (DueAnswers of src/federation/limit.ts).
            answered(st, stop);
            if (s >= 300 && s < 400) {
                if (res.body() instanceof Closeable c) c.close();
                if (st != null) st.refusedStatus = s;
                String from = res.uri().toString();
                String to = res.headers().firstValue("location").map(l -> {
                    try { return res.uri().resolve(l).toString(); } catch (IllegalArgumentException e) { return l; }
                }).orElse("");
                boolean ok = !to.isEmpty() && allowed.contains(endpointKey(to));
                throw new RedirectRefused(shown(from) + " answered HTTP " + s + " with a redirect to " + (to.isEmpty() ? "(no Location)" : shown(to))
                    + ": not followed, " + (ok ? "a query goes only to the endpoint named in its SERVICE clause" : (to.isEmpty() ? "the target" : shown(to)) + " is not a registered endpoint")
                    + "; nothing was sent there");
            }
            if (st != null && s >= 400 && res.body() instanceof InputStream in) {
                // Kept for the error's message (e.g. an endpoint's own time limit), and handed on unchanged. Registered
                // first: a cancel closes it, which ends a read of a body that never ends.
                st.streams.add(in);
                byte[] start = in.readNBytes(4096);
                in.close();
                st.errorBody = new String(start, StandardCharsets.UTF_8);
                st.errorEndpoint = endpointOf(res.uri().toString());
                // Another server's 503 that names a time limit in its text ("Query timed out"), without Fkgqa-Stopped: the fault
                // with `said`, which fkgqa reads as its direct route reads such an answer (readStop: the limit sent and the clock).
                if (s == 503 && stop == null && TIME_LIMIT_TEXT.matcher(st.errorBody).find()) {
                    String said = st.errorBody.length() > 4096 ? st.errorBody.substring(0, 4096) : st.errorBody;
                    JsonObject f = fault(st.errorEndpoint, "answered HTTP 503 saying it stopped the query at a time limit (" + firstLine(said, 200) + ")", s, null);
                    f.put("said", said);
                    String limit = sent.headers().firstValue("Fkgqa-Timeout").orElse(null);
                    if (limit != null) { try { f.put("sentLimitMs", Long.parseLong(limit)); } catch (NumberFormatException ignored) {} }
                    f.put("elapsedMs", (statusNanos - sentNanos) / 1_000_000L);
                    recordFault(st, f);
                }
                return withBody(res, new ByteArrayInputStream(start));
            }
            if (st != null && s >= 200 && s < 300) {
                // A 2xx answer of no SPARQL results type with term types (an error page, application/json, text/csv,
                // none, an empty 200 or a 204) is this endpoint's fault (Jena's own message was an NPE for none).
                String type = res.headers().firstValue("content-type").orElse("").split(";")[0].trim().toLowerCase(Locale.ROOT);
                if (!RESULT_TYPES.contains(type)) {
                    if (res.body() instanceof Closeable c) c.close();
                    String what = "answered HTTP " + s + " " + (type.isEmpty() ? "without a content type" : "with content type " + type) + ", which is no SPARQL results type"
                        + (type.equals("text/csv") ? " with term types (CSV carries plain strings)" : "");
                    String endpoint = endpointOf(res.uri().toString());
                    recordFault(st, endpoint, what, s);
                    throw new IOException("the endpoint " + endpoint + " " + what);
                }
            }
            if (st != null && res.body() instanceof InputStream in) {
                st.streams.add(in);
                // CheckedStream decodes a Content-Encoding itself (to check the document): Jena gets the decoded body, without the header.
                if (s >= 200 && s < 300) return withBody(res, new CheckedStream(in, st, endpointOf(res.uri().toString()), s, res.headers().firstValue("content-type").orElse(""), String.join(",", res.headers().allValues("content-encoding"))));
            }
            return res;
        }

        /** The response with another body (the checked stream). */
        @SuppressWarnings("unchecked")
        private static <T> HttpResponse<T> withBody(HttpResponse<T> res, InputStream body) {
            return new HttpResponse<T>() {
                @Override public int statusCode() { return res.statusCode(); }
                @Override public HttpRequest request() { return res.request(); }
                @Override public Optional<HttpResponse<T>> previousResponse() { return res.previousResponse(); }
                @Override public HttpHeaders headers() { return body instanceof CheckedStream ? HttpHeaders.of(res.headers().map(), (k, v) -> !k.equalsIgnoreCase("content-encoding")) : res.headers(); }
                @Override public T body() { return (T) body; }
                @Override public Optional<javax.net.ssl.SSLSession> sslSession() { return res.sslSession(); }
                @Override public URI uri() { return res.uri(); }
                @Override public HttpClient.Version version() { return res.version(); }
            };
        }

        @Override public <T> HttpResponse<T> send(HttpRequest req, HttpResponse.BodyHandler<T> handler) throws IOException, InterruptedException {
            QueryState st = CURRENT.get();
            HttpRequest r = admit(req, st);
            long sentNanos = System.nanoTime();
            HttpClient client = real;
            CompletableFuture<HttpResponse<T>> f = client.sendAsync(r, noReuse(handler, client));
            if (st != null) st.inFlight.add(f);
            HttpResponse<T> res = null;
            try {
                res = f.get();
                return check(res, st, r, sentNanos);
            } catch (CancellationException e) {
                throw new IOException("query cancelled");
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                if (c instanceof IOException io) throw networkFault(io, st, r);
                throw new IOException(c == null ? e.toString() : c.toString(), c);
            } catch (InterruptedException e) {
                f.cancel(true);
                throw e;
            } finally {
                if (st != null) st.inFlight.remove(f);
                // No answer (check reports one): the request is no longer in flight.
                if (res == null) answered(st, null);
            }
        }

        @Override public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest req, HttpResponse.BodyHandler<T> handler) {
            return sendAsync(req, handler, null);
        }

        @Override public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest req, HttpResponse.BodyHandler<T> handler, HttpResponse.PushPromiseHandler<T> push) {
            QueryState st = CURRENT.get();
            HttpRequest r;
            try { r = admit(req, st); } catch (IOException e) { return CompletableFuture.failedFuture(e); }
            long sentNanos = System.nanoTime();
            HttpClient client = real;
            CompletableFuture<HttpResponse<T>> f = client.sendAsync(r, noReuse(handler, client));
            if (st != null) st.inFlight.add(f);
            return f.handle((res, err) -> {
                if (st != null) st.inFlight.remove(f);
                if (err != null) {
                    answered(st, null);
                    Throwable c = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                    throw new CompletionException(c instanceof IOException io ? networkFault(io, st, r) : c);
                }
                try { return check(res, st, r, sentNanos); } catch (IOException e) { throw new CompletionException(e); }
            });
        }

        /**
         * A network failure before any answer (connection refused, closed before answering), recorded
         * as the query's fault naming the endpoint (Jena's own message names the URL with its query);
         * not the query's own time limit (HttpTimeoutException) nor a cancellation.
         */
        private static IOException networkFault(IOException io, QueryState st, HttpRequest r) {
            if (st == null || st.cancelled || io instanceof java.net.http.HttpTimeoutException) return io;
            String endpoint = endpointOf(r.uri().toString());
            String m = io.getMessage() == null ? io.getClass().getSimpleName() : io.getMessage();
            String what = io instanceof java.net.ConnectException ? "refused the connection (nothing listens there)"
                : m.contains("received no bytes") || m.contains("EOF reached") ? "closed the connection before answering"
                : "could not be reached (" + m + ")";
            recordFault(st, endpoint, what, null);
            return new IOException("the endpoint " + endpoint + " " + what, io);
        }

        @Override public Optional<java.net.CookieHandler> cookieHandler() { return real.cookieHandler(); }
        @Override public Optional<Duration> connectTimeout() { return real.connectTimeout(); }
        @Override public Redirect followRedirects() { return Redirect.NEVER; }
        @Override public Optional<java.net.ProxySelector> proxy() { return real.proxy(); }
        @Override public SSLContext sslContext() { return real.sslContext(); }
        @Override public SSLParameters sslParameters() { return real.sslParameters(); }
        @Override public Optional<java.net.Authenticator> authenticator() { return real.authenticator(); }
        @Override public Version version() { return real.version(); }
        @Override public Optional<Executor> executor() { return real.executor(); }
    }

    static JsonObject with(JsonObject o, String k, String v) { o.put(k, v); return o; }

    /**
     * An answer's body checked (as fkgqa's comunica/thread.ts checkedAnswer and
     * src/federation/answer-check.ts): a connection that closes before the end of the body, and a
     * SPARQL JSON or XML results document that is incomplete or no results document, fail the query
     * with an IOException naming the endpoint, recorded as the query's fault. SPARQL JSON and XML
     * results are read whole at the first read and checked before Jena parses them (Jena's parsers
     * stop reading at the end of the document, so a check at end of input would not run).
     */
    static final class CheckedStream extends FilterInputStream {
        private final QueryState st;
        private final String endpoint;
        private final int status;
        private final String type;
        /** SPARQL JSON or XML results: read whole and checked (`whole`); other types pass through, only a cut connection is caught. */
        private final boolean checked;
        private long bytes;

        /** The answer's content codings in the order applied (lower case, identity dropped: fkgqa's codingsOf). */
        private final List<String> codings = new ArrayList<>();
        /** Whether `in` is already the decoding stream. */
        private boolean decoding;
        /** Bytes received on the wire (before decoding). */
        private long raw;

        CheckedStream(InputStream in, QueryState st, String endpoint, int status, String contentType, String contentEncoding) {
            super(in);
            this.st = st;
            this.endpoint = endpoint;
            this.status = status;
            this.type = contentType.split(";")[0].trim().toLowerCase(Locale.ROOT);
            this.checked = type.equals("application/sparql-results+json") || type.equals("application/sparql-results+xml");
            for (String c : contentEncoding.split(",")) {
                String t = c.trim().toLowerCase(Locale.ROOT);
                if (!t.isEmpty() && !t.equals("identity")) codings.add(t);
            }
        }

        /**
         * The rule of fkgqa's http.ts DECODED_CODINGS: gzip (x-gzip) and deflate, alone or one after
         * another, are decoded (none is asked for); another coding, one that does not decode, or one
         * that decodes to more than maxDecodedBytes is the endpoint's fault, in the same words.
         */
        private void decode() throws IOException {
            if (decoding) return;
            decoding = true;
            if (codings.isEmpty()) return;
            for (String c : codings) {
                if (!c.equals("gzip") && !c.equals("x-gzip") && !c.equals("deflate")) {
                    throw fault("sent an answer with Content-Encoding " + String.join(", ", codings) + ", which is not decoded (" + c + " is none of gzip, x-gzip, deflate)", null);
                }
            }
            InputStream wire = in;
            in = new FilterInputStream(wire) {
                @Override public int read() throws IOException { int b = super.read(); if (b >= 0) raw++; return b; }
                @Override public int read(byte[] b, int off, int len) throws IOException { int n = super.read(b, off, len); if (n > 0) raw += n; return n; }
            };
            try {
                for (int i = codings.size() - 1; i >= 0; i--) {
                    String c = codings.get(i);
                    in = c.equals("deflate") ? new java.util.zip.InflaterInputStream(in) : new java.util.zip.GZIPInputStream(in, 65536);
                }
            } catch (java.util.zip.ZipException | EOFException e) {
                throw undecodable(e);
            }
        }

        /** Counts decoded bytes; an encoded answer over maxDecodedBytes decoded is the endpoint's fault (a compression bomb). */
        private void count(int n) throws IOException {
            if (n <= 0) return;
            bytes += n;
            if (!codings.isEmpty() && bytes > maxDecodedBytes) {
                throw fault("sent a " + String.join(", ", codings) + "-encoded answer of " + raw + " bytes that decodes to more than " + maxDecodedBytes + " bytes (the answer limit): not read", null);
            }
        }

        private IOException undecodable(IOException e) {
            // A stream without its end or trailer: zlib's words (fkgqa's decodeBody), not the bare class name.
            String m = e instanceof EOFException && e.getMessage() == null ? "unexpected end of file" : e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            String c = codings.size() == 1 ? codings.get(0) : String.join(", ", codings);
            return fault("sent a " + c + "-encoded answer that does not decode (" + m + "; " + raw + " bytes received)", e);
        }

        private IOException fault(String what, Throwable cause) {
            recordFault(st, endpoint, what, status);
            return new IOException("the endpoint " + endpoint + " " + what, cause);
        }

        /** The checked body, read whole at the first read (Jena's parsers stop at the document's end, before end of input). */
        private ByteArrayInputStream whole;

        private ByteArrayInputStream whole() throws IOException {
            if (whole != null) return whole;
            decode();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            byte[] buf = new byte[65536];
            for (;;) {
                int n;
                try {
                    n = in.read(buf);
                } catch (java.util.zip.ZipException | EOFException e) {
                    if (st.cancelled) throw e;
                    throw undecodable(e);
                } catch (IOException e) {
                    if (st.cancelled) throw e;
                    throw fault("closed the connection before the answer was complete (HTTP " + status + ", " + bytes + " bytes received)", e);
                }
                if (n < 0) break;
                count(n);
                all.write(buf, 0, n);
            }
            String problem = problem(all.toString(StandardCharsets.UTF_8), type);
            if (problem != null) throw fault("answered something that is not a SPARQL results document (" + type + "): " + problem, null);
            whole = new ByteArrayInputStream(all.toByteArray());
            return whole;
        }

        @Override public int read() throws IOException {
            if (checked) return whole().read();
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override public int read(byte[] b, int off, int len) throws IOException {
            if (checked) return whole().read(b, off, len);
            decode();
            int n;
            try {
                n = super.read(b, off, len);
            } catch (java.util.zip.ZipException | EOFException e) {
                if (st.cancelled) throw e;
                throw undecodable(e);
            } catch (IOException e) {
                if (st.cancelled) throw e;
                throw fault("closed the connection before the answer was complete (HTTP " + status + ", " + bytes + " bytes received)", e);
            }
            count(n);
            return n;
        }

        @Override public int available() throws IOException { return checked ? whole().available() : super.available(); }

        @Override public long skip(long n) throws IOException {
            byte[] buf = new byte[(int) Math.min(n, 8192)];
            int r = read(buf, 0, buf.length);
            return Math.max(r, 0);
        }
    }

    /** Records the first fault of a query (see QueryState.fault). */
    static void recordFault(QueryState st, String endpoint, String what, Integer status) { recordFault(st, fault(endpoint, what, status, null)); }

    /** A fault (EndpointFault of src/federation/engine.ts); `stopped`: the Fkgqa-Stopped header of a 503 of fkgqa serve (EndpointFault.stopped). */
    static JsonObject fault(String endpoint, String what, Integer status, String stopped) {
        JsonObject f = new JsonObject();
        f.put("endpoint", endpoint);
        f.put("what", what);
        if (status != null) f.put("httpStatus", status);
        if (stopped != null) f.put("stopped", stopped);
        return f;
    }

    /**
     * Records the first fault of a query; not one of the endpoint of the SERVICE SILENT clause being evaluated on this
     * thread (SILENT_SERVICE), whose failure gives one empty solution and is not the query's.
     */
    static synchronized void recordFault(QueryState st, JsonObject f) {
        String silent = SILENT_SERVICE.get();
        if (silent != null && f.hasKey("endpoint") && endpointKey(silent).equals(endpointKey(f.get("endpoint").getAsString().value()))) return;
        if (st.fault == null) st.fault = f;
    }

    /** The first non-empty line of a text, its blanks collapsed, at most `max` characters (fkgqa reads the whole text again: errorBody). */
    static String firstLine(String text, int max) {
        for (String l : text.split("\\r?\\n")) {
            String t = l.replaceAll("\\s+", " ").trim();
            if (!t.isEmpty()) return t.length() > max ? t.substring(0, max) : t;
        }
        return "";
    }

    /** The endpoint of the SERVICE SILENT clause this thread is sending and reading (ServiceGuard), or null. */
    static final ThreadLocal<String> SILENT_SERVICE = new ThreadLocal<>();

    /** Words of another server's 503 saying it stopped the query at a time limit (fkgqa's TIME_LIMIT_TEXT of src/federation/limit.ts). */
    static final java.util.regex.Pattern TIME_LIMIT_TEXT = java.util.regex.Pattern.compile("time limit|timeout|timed out", java.util.regex.Pattern.CASE_INSENSITIVE);

    /** Tells fkgqa that a request of query `st` has its answer's status line or failed; `fault` when the answer stopped the query (a 503 with Fkgqa-Stopped). */
    static void answered(QueryState st, JsonObject fault) {
        if (st == null) return;
        JsonObject o = msg("answered", st.id);
        if (fault != null) o.put("fault", fault);
        emit(o);
    }

    /** The RDF term types of SPARQL JSON results (answer-check.ts TERM_TYPES). */
    static final java.util.Set<String> TERM_TYPES = java.util.Set.of("uri", "literal", "bnode", "triple");

    /** What is wrong with a SPARQL results document answering a SELECT (a SERVICE clause), or null (as answer-check.ts resultsProblem). */
    static String problem(String text, String type) {
        if (type.equals("application/sparql-results+json")) {
            JsonValue doc;
            try {
                doc = JSON.parseAny(text);
            } catch (RuntimeException e) {
                // Jena's JSON parser words a cut document poorly (a NullPointerException): the size says more.
                return "it is not JSON (" + text.getBytes(StandardCharsets.UTF_8).length + " bytes" + (text.isBlank() ? ", empty" : "") + ")";
            }
            if (!doc.isObject()) return "it is not a JSON object";
            JsonObject o = doc.getAsObject();
            if (!o.hasKey("head") || !o.get("head").isObject()) return "it has no \"head\" object";
            // A SERVICE clause is sent as a SELECT: a boolean answer is the wrong form.
            if (o.hasKey("boolean") && o.get("boolean").isBoolean()) return o.hasKey("results") ? "it has both \"results\" and \"boolean\"" : "it is a boolean (an ASK answer) but the query is a SELECT";
            if (!o.hasKey("results") || !o.get("results").isObject()) return "it has neither \"results\" nor a boolean \"boolean\"";
            JsonObject r = o.get("results").getAsObject();
            if (!r.hasKey("bindings") || !r.get("bindings").isArray()) return "it has no \"results.bindings\" array";
            int i = 0;
            for (JsonValue row : r.get("bindings").getAsArray()) {
                i++;
                if (!row.isObject()) return "row " + i + " of \"results.bindings\" is not an object";
                JsonObject b = row.getAsObject();
                for (String k : b.keys()) {
                    JsonValue t = b.get(k);
                    boolean term = t.isObject() && t.getAsObject().hasKey("type") && t.getAsObject().get("type").isString()
                        && TERM_TYPES.contains(t.getAsObject().get("type").getAsString().value())
                        && t.getAsObject().hasKey("value")
                        && (t.getAsObject().get("type").getAsString().value().equals("triple") ? t.getAsObject().get("value").isObject() : t.getAsObject().get("value").isString());
                    if (!term) return "row " + i + " of \"results.bindings\" binds ?" + k + " to no RDF term";
                }
            }
            return null;
        }
        if (type.equals("application/sparql-results+xml")) {
            String t = text.trim();
            if (!java.util.regex.Pattern.compile("<(?:\\w+:)?sparql[\\s>]").matcher(t).find()) return "it has no <sparql> root element";
            if (!java.util.regex.Pattern.compile("</(?:\\w+:)?sparql>$").matcher(t).find()) return "it does not end with </sparql> (" + text.getBytes(StandardCharsets.UTF_8).length + " bytes: cut off?)";
            if (!java.util.regex.Pattern.compile("<(?:\\w+:)?(?:results|boolean)[\\s>/]").matcher(t).find()) return "it has neither <results> nor <boolean>";
            if (java.util.regex.Pattern.compile("<(?:\\w+:)?boolean[\\s>/]").matcher(t).find()) return "it is a boolean (an ASK answer) but the query is a SELECT";
            return xmlStructureProblem(t);
        }
        return null;
    }

    static final String SPARQL_RESULTS_NS = "http://www.w3.org/2005/sparql-results#";
    /** The elements of a SPARQL XML results document (fkgqa's xml-results.ts ELEMENTS). */
    static final java.util.Set<String> XML_ELEMENTS = java.util.Set.of("sparql", "head", "variable", "link", "results", "result", "binding", "uri", "bnode", "literal", "triple", "subject", "predicate", "object", "boolean");
    static final java.util.regex.Pattern XML_SKIPPED = java.util.regex.Pattern.compile("(?s)<!--.*?-->|<!\\[CDATA\\[.*?\\]\\]>|<\\?.*?\\?>");
    static final java.util.regex.Pattern XML_ROOT = java.util.regex.Pattern.compile("<(?:([\\w.-]+):)?sparql[\\s>]([^>]*)");
    static final java.util.regex.Pattern XML_ELEMENT = java.util.regex.Pattern.compile("<([\\w.:-]+)");
    static final java.util.regex.Pattern XML_BINDING = java.util.regex.Pattern.compile("(?s)<(?:[\\w.-]+:)?binding\\b[^>]*?(?:/>|>(.*?)</(?:[\\w.-]+:)?binding\\s*>)");
    static final java.util.regex.Pattern XML_TERM = java.util.regex.Pattern.compile("(?s)\\s*<(?:[\\w.-]+:)?(?:uri|bnode|literal|triple)[\\s>/].*>\\s*");

    /**
     * What Jena's XML results parser would pass over (as fkgqa's xml-results.ts structureOf, with the
     * same words): a DOCTYPE (entities), the root outside the SPARQL results namespace, an element the
     * format does not have, more than one <results>, a <result> outside <results> (dropped by the
     * parser), a <binding> that holds no RDF term (read as an unbound variable: an empty row).
     */
    static String xmlStructureProblem(String text) {
        String markup = XML_SKIPPED.matcher(text).replaceAll("");
        if (markup.toUpperCase(Locale.ROOT).contains("<!DOCTYPE")) return "it has a document type declaration (<!DOCTYPE …>), which SPARQL XML results do not have";
        java.util.regex.Matcher root = XML_ROOT.matcher(markup);
        String ns = null;
        if (root.find()) {
            java.util.regex.Matcher n = java.util.regex.Pattern.compile("xmlns" + (root.group(1) != null ? ":" + java.util.regex.Pattern.quote(root.group(1)) : "") + "\\s*=\\s*[\"']([^\"']*)[\"']").matcher(root.group(0));
            if (n.find()) ns = n.group(1);
        }
        if (!SPARQL_RESULTS_NS.equals(ns)) return "its root is not <sparql> in the SPARQL results namespace " + SPARQL_RESULTS_NS + (ns != null && !ns.isEmpty() ? " (it is \"" + (ns.length() > 80 ? ns.substring(0, 80) : ns) + "\")" : "");
        int results = 0, resultsElements = 0, bindings = 0, inside = 0;
        int open = -1, close = -1;
        java.util.regex.Matcher e = XML_ELEMENT.matcher(markup);
        while (e.find()) {
            String name = e.group(1).replaceFirst("^[\\w.-]+:", "");
            if (!XML_ELEMENTS.contains(name)) return "it holds an element <" + (e.group(1).length() > 40 ? e.group(1).substring(0, 40) : e.group(1)) + "> that SPARQL XML results do not have";
            if (name.equals("result")) results++;
            else if (name.equals("results")) { resultsElements++; if (open < 0) open = e.start(); }
            else if (name.equals("binding")) bindings++;
        }
        if (resultsElements > 1) return "it holds " + resultsElements + " <results> elements (one is allowed)";
        java.util.regex.Matcher end = java.util.regex.Pattern.compile("</(?:[\\w.-]+:)?results\\s*>").matcher(markup);
        if (end.find()) close = end.start();
        java.util.regex.Matcher r = java.util.regex.Pattern.compile("<(?:[\\w.-]+:)?result[\\s>/]").matcher(markup);
        while (r.find()) if (open >= 0 && r.start() > open && (close < 0 || r.start() < close)) inside++;
        if (inside != results) return "it holds " + results + " <result> elements, of which " + inside + " are rows inside <results>";
        int terms = 0;
        java.util.regex.Matcher b = XML_BINDING.matcher(markup);
        while (b.find()) if (b.group(1) != null && XML_TERM.matcher(b.group(1)).matches()) terms++;
        if (terms != bindings) return "it holds " + bindings + " <binding> elements, of which " + terms + " hold an RDF term";
        return null;
    }

    static String serializeSelect(ResultSet rs, String mediaType) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        switch (mediaType) {
            case "application/sparql-results+json": ResultSetFormatter.output(out, rs, ResultSetLang.RS_JSON); break;
            case "application/sparql-results+xml": ResultSetFormatter.output(out, rs, ResultSetLang.RS_XML); break;
            case "text/csv": ResultSetFormatter.output(out, rs, ResultSetLang.RS_CSV); break;
            case "text/tab-separated-values": ResultSetFormatter.output(out, rs, ResultSetLang.RS_TSV); break;
            default: throw new IllegalArgumentException("media type " + mediaType + " is not offered for SELECT (offered: application/sparql-results+json, application/sparql-results+xml, text/csv, text/tab-separated-values)");
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String serializeAsk(boolean b, String mediaType) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        switch (mediaType) {
            case "application/sparql-results+json": ResultSetFormatter.outputAsJSON(out, b); break;
            case "application/sparql-results+xml": ResultSetFormatter.outputAsXML(out, b); break;
            default: throw new IllegalArgumentException("media type " + mediaType + " is not offered for ASK (offered: application/sparql-results+json, application/sparql-results+xml)");
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String serializeGraph(Model m, String mediaType) {
        Lang lang;
        switch (mediaType) {
            case "application/n-triples": lang = Lang.NTRIPLES; break;
            case "text/turtle": lang = Lang.TURTLE; break;
            default: throw new IllegalArgumentException("media type " + mediaType + " is not offered for CONSTRUCT/DESCRIBE (offered: application/n-triples, text/turtle)");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RDFDataMgr.write(out, m, lang);
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * ARQ's SERVICE executor (ServiceExecutorRegistry.httpService) with every failure of a SERVICE clause that is
     * not SILENT recorded as the query's (QueryState.serviceFailure), when it is sent and while its rows are read.
     * ARQ evaluates FILTER (NOT) EXISTS per solution, and its filter (QueryIterFilterExpr) turns any exception of
     * that evaluation into "false": an endpoint unreachable, answering 500, or refusing the query (400) inside
     * FILTER EXISTS gave 0 rows, inside FILTER NOT EXISTS 0 rows too, and the query ended as if answered.
     * runQuery fails such a query with the recorded failure, as it fails outside EXISTS (and as comunica does).
     * A SILENT clause's failure is not recorded: ARQ's QueryIterService answers it with one empty solution, as
     * the standard prescribes.
     */
    static final class ServiceGuard implements ServiceExecutorFactory {
        @Override public ServiceExecution createExecutor(OpService opExecute, OpService original, Binding binding, ExecutionContext execCxt) {
            ServiceExecution http = ServiceExecutorRegistry.httpService.createExecutor(opExecute, original, binding, execCxt);
            if (http == null) return null;
            boolean silent = original.getSilent() || opExecute.getSilent();
            QueryState st = CURRENT.get();
            return () -> {
                QueryIterator it;
                String outer = SILENT_SERVICE.get();
                // ARQ sends the clause and reads its answer whole on this thread (Service.exec materializes it).
                if (silent) SILENT_SERVICE.set(original.getService().isURI() ? original.getService().getURI() : "");
                try {
                    it = http.exec();
                } catch (RuntimeException e) {
                    if (!silent) record(st, e);
                    throw e;
                } finally {
                    SILENT_SERVICE.set(outer);
                }
                return new QueryIteratorWrapper(it) {
                    @Override protected boolean hasNextBinding() {
                        try { return super.hasNextBinding(); } catch (RuntimeException e) { if (!silent) record(st, e); throw e; }
                    }
                    @Override protected Binding moveToNextBinding() {
                        try { return super.moveToNextBinding(); } catch (RuntimeException e) { if (!silent) record(st, e); throw e; }
                    }
                };
            };
        }

        private static synchronized void record(QueryState st, RuntimeException e) {
            if (st != null && !st.cancelled && st.serviceFailure == null) st.serviceFailure = e;
        }
    }

    static void runQuery(QueryState st, String text, String mediaType) {
        CURRENT.set(st);
        st.thread = Thread.currentThread();
        try {
            Query query = QueryFactory.create(text, Syntax.syntaxSPARQL_11);
            Dataset empty = DatasetFactory.empty();
            try (QueryExecution qe = QueryExecution.create()
                    .query(query)
                    .dataset(empty)
                    .set(ARQ.optIndexJoinStrategy, false)
                    // Jena 4.5's implicit-join rewrite turns a correlated FILTER (NOT) EXISTS
                    // (an outer variable compared with an inner one, e.g. dog_kennels/q33) into
                    // (table empty), so NOT EXISTS keeps every solution; off, the answer is right.
                    .set(ARQ.optFilterImplicitJoin, false)
                    .timeout(st.remainingMs() + st.graceMs, TimeUnit.MILLISECONDS)
                    .build()) {
                st.exec = qe;
                if (st.cancelled) throw new QueryCancelledException();
                String body;
                if (query.isSelectType()) body = serializeSelect(qe.execSelect(), mediaType);
                else if (query.isAskType()) body = serializeAsk(qe.execAsk(), mediaType);
                else if (query.isConstructType()) body = serializeGraph(qe.execConstruct(), mediaType);
                else if (query.isDescribeType()) body = serializeGraph(qe.execDescribe(), mediaType);
                else throw new IllegalArgumentException("unsupported query form");
                if (st.cancelled) return;
                // A SERVICE clause failed where ARQ swallowed it (inside FILTER (NOT) EXISTS): the query fails with it (ServiceGuard).
                if (st.serviceFailure != null) throw st.serviceFailure;
                JsonObject o = msg("result", st.id);
                o.put("body", body);
                o.put("contentType", mediaType);
                emit(o);
            }
        } catch (Throwable t) {
            if (st.cancelled) return;
            JsonObject o = msg("error", st.id);
            Integer status = st.refusedStatus;
            Throwable c = t;
            while (c != null && status == null) {
                if (c instanceof QueryExceptionHTTP h && h.getStatusCode() > 0) status = h.getStatusCode();
                c = c.getCause();
            }
            String m = describe(t);
            o.put("error", m);
            if (status != null) o.put("httpStatus", status);
            if (st.fault != null) o.put("fault", st.fault);
            if (status != null && status >= 400 && st.errorBody != null && !st.errorBody.isBlank()) o.put("errorBody", st.errorBody);
            if (status != null && status >= 400 && st.errorEndpoint != null) o.put("errorEndpoint", st.errorEndpoint);
            emit(o);
        } finally {
            RUNNING.remove(st.id);
            CURRENT.remove();
            if (st.cancelled) emit(msg("cancelled", st.id));
        }
    }

    /** A redirect not followed (GuardedHttpClient.check): its message names both URLs and the status, the whole story. */
    static final class RedirectRefused extends IOException {
        RedirectRefused(String message) { super(message); }
    }

    /** A URL with a query string (ARQ quotes the GET it sent, the whole SPARQL query percent-encoded) in a message; group 1 the URL before it, group 2 a trailing colon. */
    static final java.util.regex.Pattern URL_WITH_QUERY = java.util.regex.Pattern.compile("(https?://[^\\s?#]*)[?#]\\S*?(:?)(?=\\s|$)");

    /**
     * A one-line message: the exception's message and its causes' (Jena wraps HTTP failures twice),
     * every URL's query string shown as ?… (shown); a redirect not followed is its own message alone.
     */
    static String describe(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) if (c instanceof RedirectRefused r) return r.getMessage();
        StringBuilder sb = new StringBuilder();
        Set<String> seen = new HashSet<>();
        for (Throwable c = t; c != null && seen.size() < 4; c = c.getCause()) {
            String m = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
            m = URL_WITH_QUERY.matcher(m.replaceAll("\\s+", " ").trim()).replaceAll("$1?…$2");
            if (seen.add(m)) sb.append(sb.length() == 0 ? "" : ": ").append(m);
        }
        if (t instanceof QueryParseException) return "the query does not parse (Jena): " + sb;
        return sb.toString();
    }

    /**
     * Debian's jena-core.jar (libapache-jena-java 4.5.0-2) relocates Jena's copy of Xerces from
     * org.apache.jena.ext.xerces to xerces but leaves its message bundles at the old path, so
     * xerces.impl.xpath.regex.RegexParser cannot load "xerces.impl.xpath.regex.message" and Jena
     * fails to initialise ("ExceptionInInitializerError … XSSimpleTypeDecl.applyFacets1: internal
     * error"), in Jena's own command-line tools too. Copies every org/apache/jena/ext/xerces/**.properties
     * of the jar to xerces/** under `dir`, a directory on the class path (given by fkgqa), unless
     * the bundle is found already (an upstream jar, or a copy made by an earlier start).
     */
    static void provideXercesMessages(java.nio.file.Path dir) throws IOException {
        ClassLoader cl = JenaFederationEngine.class.getClassLoader();
        if (cl.getResource("xerces/impl/xpath/regex/message.properties") != null) return;
        java.net.URL jar = org.apache.jena.datatypes.xsd.XSDDatatype.class.getProtectionDomain().getCodeSource().getLocation();
        String prefix = "org/apache/jena/ext/xerces/";
        try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(new File(jar.getPath()))) {
            for (java.util.zip.ZipEntry e : Collections.list(zip.entries())) {
                if (!e.getName().startsWith(prefix) || !e.getName().endsWith(".properties")) continue;
                java.nio.file.Path target = dir.resolve("xerces").resolve(e.getName().substring(prefix.length()));
                java.nio.file.Files.createDirectories(target.getParent());
                java.nio.file.Path tmp = java.nio.file.Files.createTempFile(target.getParent(), ".msg", ".tmp");
                try (InputStream in = zip.getInputStream(e)) {
                    java.nio.file.Files.copy(in, tmp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
                java.nio.file.Files.move(tmp, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
        }
    }

    /**
     * The function urn:fkgqa:function:str (src/sparql/builtins.ts: fkgqa rewrites STR and xsd:string
     * outside SERVICE into it, for every engine): STR, but a number's string is the canonical form of
     * its value that oxigraph writes (canonicalNumber), as Comunica's implementation does; an IRI
     * gives its text, a blank node an evaluation error.
     */
    public static final class CanonicalStr extends org.apache.jena.sparql.function.FunctionBase1 {
        @Override
        public org.apache.jena.sparql.expr.NodeValue exec(org.apache.jena.sparql.expr.NodeValue v) {
            org.apache.jena.graph.Node n = v.asNode();
            if (n.isURI()) return org.apache.jena.sparql.expr.NodeValue.makeString(n.getURI());
            if (!n.isLiteral()) throw new org.apache.jena.sparql.expr.ExprEvalException("STR of a blank node");
            String lex = n.getLiteralLexicalForm();
            String c = canonicalNumber(lex, n.getLiteralDatatypeURI());
            return org.apache.jena.sparql.expr.NodeValue.makeString(c != null ? c : lex);
        }
    }

    /**
     * The function urn:fkgqa:function:divide (src/sparql/builtins.ts: fkgqa rewrites `/` outside
     * SERVICE into it, for every engine): `/` as oxigraph computes it (divideNumbers of
     * src/sparql/builtins.ts, the same rules): of two xsd:integer or xsd:decimal values an xsd:decimal
     * truncated toward zero to 18 fractional digits (ARQ: 24 digits, rounded), an evaluation error
     * for a divisor 0 or a quotient out of oxigraph's range; else IEEE division of doubles (floats
     * when neither is a double).
     */
    public static final class Divide extends org.apache.jena.sparql.function.FunctionBase2 {
        @Override
        public org.apache.jena.sparql.expr.NodeValue exec(org.apache.jena.sparql.expr.NodeValue a, org.apache.jena.sparql.expr.NodeValue b) {
            return divide(a, b);
        }
    }

    /** The function urn:fkgqa:function:avg (AVG(e) is rewritten into it of SUM(e) and COUNT(e)): 0 for no value, else Divide. */
    public static final class Average extends org.apache.jena.sparql.function.FunctionBase2 {
        @Override
        public org.apache.jena.sparql.expr.NodeValue exec(org.apache.jena.sparql.expr.NodeValue sum, org.apache.jena.sparql.expr.NodeValue count) {
            if (count.isInteger() && count.getInteger().signum() == 0) return org.apache.jena.sparql.expr.NodeValue.makeInteger(0);
            return divide(sum, count);
        }
    }

    static final java.math.BigDecimal DECIMAL_MAX = new java.math.BigDecimal(java.math.BigInteger.TWO.pow(127).subtract(java.math.BigInteger.ONE), 18);

    static org.apache.jena.sparql.expr.NodeValue divide(org.apache.jena.sparql.expr.NodeValue a, org.apache.jena.sparql.expr.NodeValue b) {
        if (!a.isNumber() || !b.isNumber()) throw new org.apache.jena.sparql.expr.ExprEvalException("division of values that are not numbers");
        String ta = a.asNode().getLiteralDatatypeURI(), tb = b.asNode().getLiteralDatatypeURI();
        boolean floatA = ta.equals(XSD + "float") || ta.equals(XSD + "double"), floatB = tb.equals(XSD + "float") || tb.equals(XSD + "double");
        if (!floatA && !floatB) {
            java.math.BigDecimal d = b.getDecimal();
            if (d.signum() == 0) throw new org.apache.jena.sparql.expr.ExprEvalException("decimal division by 0");
            java.math.BigDecimal q = a.getDecimal().divide(d, 18, java.math.RoundingMode.DOWN);
            if (q.abs().compareTo(DECIMAL_MAX) > 0) throw new org.apache.jena.sparql.expr.ExprEvalException("decimal out of range");
            return org.apache.jena.sparql.expr.NodeValue.makeDecimal(q.signum() == 0 ? java.math.BigDecimal.ZERO : q.stripTrailingZeros());
        }
        if (!ta.equals(XSD + "double") && !tb.equals(XSD + "double")) return org.apache.jena.sparql.expr.NodeValue.makeFloat(a.getFloat() / b.getFloat());
        return org.apache.jena.sparql.expr.NodeValue.makeDouble(a.getDouble() / b.getDouble());
    }

    static final String XSD = "http://www.w3.org/2001/XMLSchema#";
    static final Set<String> INTEGER_TYPES = Set.of("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
        "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte");

    /**
     * A number's string as oxigraph writes it (canonicalNumber of src/sparql/builtins.ts, the same
     * rules): an xsd:float as the shortest digits that read back as the same value, an xsd:double the
     * same once rounded to 15 significant digits (half up), without exponent (INF, -INF, NaN, -0 as such); an xsd:decimal or integer without leading or
     * trailing zeros. Null for another datatype or an invalid lexical form.
     */
    static String canonicalNumber(String lexical, String datatype) {
        String text = lexical.trim();
        boolean isFloat = datatype.equals(XSD + "float");
        if (isFloat || datatype.equals(XSD + "double")) {
            if (text.equals("INF") || text.equals("+INF")) return "INF";
            if (text.equals("-INF")) return "-INF";
            if (text.equals("NaN")) return "NaN";
            if (!text.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?")) return null;
            double d = isFloat ? (double) Float.parseFloat(text) : Double.parseDouble(text);
            if (d == 0) return (1 / d < 0) ? "-0" : "0";
            // Rounded to 15 significant digits, half up (DOUBLE_DIGITS of src/sparql/builtins.ts, as JavaScript's toPrecision).
            if (!isFloat) d = new java.math.BigDecimal(d).round(new java.math.MathContext(15, java.math.RoundingMode.HALF_UP)).doubleValue();
            java.math.BigDecimal exact = new java.math.BigDecimal(d);
            for (int p = 1; p <= 17; p++) {
                java.math.BigDecimal r = exact.round(new java.math.MathContext(p, java.math.RoundingMode.HALF_EVEN));
                if (isFloat ? r.floatValue() == (float) d : r.doubleValue() == d) return r.stripTrailingZeros().toPlainString();
            }
            return exact.stripTrailingZeros().toPlainString();
        }
        boolean integer = datatype.startsWith(XSD) && INTEGER_TYPES.contains(datatype.substring(XSD.length()));
        if (!integer && !datatype.equals(XSD + "decimal")) return null;
        if (!text.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)")) return null;
        java.math.BigDecimal v = new java.math.BigDecimal(text);
        return v.signum() == 0 ? "0" : v.stripTrailingZeros().toPlainString();
    }

    public static void main(String[] args) throws Exception {
        // No connection is reused after its answer (GuardedHttpClient.noReuse): every request says Connection: close, a
        // header java.net.http sends only when allowed here; a connection left in a pool all the same expires at once
        // (0 s) and is closed when that client's selector thread runs next. The JDK reads both properties when its
        // first HttpClient is made: set first.
        System.setProperty("jdk.httpclient.allowRestrictedHeaders", "connection");
        System.setProperty("jdk.httpclient.keepalive.timeout", "0");
        if (args.length > 0) provideXercesMessages(java.nio.file.Path.of(args[0]));
        JenaSystem.init();
        org.apache.jena.sparql.function.FunctionRegistry.get().put("urn:fkgqa:function:str", CanonicalStr.class);
        org.apache.jena.sparql.function.FunctionRegistry.get().put("urn:fkgqa:function:divide", Divide.class);
        org.apache.jena.sparql.function.FunctionRegistry.get().put("urn:fkgqa:function:avg", Average.class);
        // One executor for every client GuardedHttpClient makes: a replaced client leaves no idle threads of its own behind.
        ExecutorService httpThreads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fkgqa-http");
            t.setDaemon(true);
            return t;
        });
        HttpEnv.setDftHttpClient(new GuardedHttpClient(() -> HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10))
            .executor(httpThreads)
            .build()));
        // Every SERVICE clause through ServiceGuard (ARQ's own HTTP executor, its failures recorded): the only executor.
        ServiceExecutorRegistry services = new ServiceExecutorRegistry();
        services.add(new ServiceGuard());
        ServiceExecutorRegistry.set(ARQ.getContext(), services);
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fkgqa-query");
            t.setDaemon(true);
            return t;
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        boolean ready = false;
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank()) continue;
            JsonObject m;
            try {
                m = JSON.parse(line);
            } catch (RuntimeException e) {
                fatal("a line from fkgqa is not JSON: " + e.getMessage());
                return;
            }
            String op = m.getString("op");
            if ("init".equals(op)) {
                Set<String> s = new HashSet<>();
                for (JsonValue v : m.get("endpoints").getAsArray()) s.add(endpointKey(v.getAsString().value()));
                allowed = Set.copyOf(s);
                if (m.hasKey("maxDecodedBytes")) maxDecodedBytes = m.get("maxDecodedBytes").getAsNumber().value().longValue();
                JsonObject o = new JsonObject();
                o.put("type", "ready");
                o.put("jena", String.valueOf(ARQ.VERSION));
                o.put("java", System.getProperty("java.version"));
                emit(o);
                ready = true;
            } else if ("query".equals(op)) {
                if (!ready) { fatal("query before init"); return; }
                long id = m.get("id").getAsNumber().value().longValue();
                long timeoutMs = m.get("timeoutMs").getAsNumber().value().longValue();
                String text = m.getString("query");
                String mediaType = m.hasKey("mediaType") ? m.getString("mediaType") : "application/sparql-results+json";
                long graceMs = m.hasKey("graceMs") ? m.get("graceMs").getAsNumber().value().longValue() : 0;
                QueryState st = new QueryState(id, timeoutMs, graceMs);
                RUNNING.put(id, st);
                pool.execute(() -> runQuery(st, text, mediaType));
            } else if ("cancel".equals(op)) {
                long id = m.get("id").getAsNumber().value().longValue();
                QueryState st = RUNNING.get(id);
                if (st != null) st.cancel();
            } else {
                fatal("unknown op " + op);
                return;
            }
        }
        // stdin closed: fkgqa is gone or closed the engine.
        for (QueryState st : RUNNING.values()) st.cancel();
        System.exit(0);
    }

    static void fatal(String message) {
        JsonObject o = new JsonObject();
        o.put("type", "fatal");
        o.put("error", message);
        emit(o);
        System.exit(3);
    }
}
