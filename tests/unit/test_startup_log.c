/*
 * Creation's steps in the verbose log (start-up time, issue 26): an encoder logs once, at
 * J2KC_LOG_VERBOSE, how many milliseconds its creation took and the steps' share
 * ("encoder created in T ms: parameters and plan P, ..., the NAME backend B"); on the CUDA
 * backend also the backend's own steps ("CUDA backend created in ..."). Checked: one line per
 * creation, its figures consistent (P + B <= T), none below the verbose level, none when
 * creation fails; and with backend=cuda, creation fails or succeeds cleanly however often it is
 * tried (the context thread of cuda_warm.cu joined every time), with or without a GPU.
 *   J2KC_TEST_BACKEND=auto|ref|cuda (default auto).
 */
#include <stdlib.h>
#include <string.h>

#include "j2kcuda.h"
#include "test.h"

typedef struct Lines {
    int    nb_created, nb_cuda;
    double total, plan, backend;
    char   backend_name[16];
    char   cuda_line[512];
} Lines;

static void log_cb(void *opaque, int level, const char *msg)
{
    Lines *l = (Lines *)opaque;
    const char *p;
    (void)level;
    if (!strncmp(msg, "encoder created in ", 19)) {
        l->nb_created++;
        l->total = strtod(msg + 19, NULL);
        if ((p = strstr(msg, "parameters and plan ")))
            l->plan = strtod(p + 20, NULL);
        else
            l->plan = -1.0;
        if ((p = strstr(msg, ", the ")) && sscanf(p + 6, "%15s backend", l->backend_name) == 1 &&
            (p = strstr(p, " backend ")))
            l->backend = strtod(p + 9, NULL);
        else
            l->backend = -1.0;
    }
    if (!strncmp(msg, "CUDA backend created in ", 24)) {
        l->nb_cuda++;
        snprintf(l->cuda_line, sizeof(l->cuda_line), "%s", msg);
    }
}

static int create(const char *backend, int level, const char *bytes, Lines *l, J2kcEncoder **enc)
{
    J2kcParams *p = j2kc_params_alloc();
    J2kcImageDesc img;
    int ret;
    memset(l, 0, sizeof(*l));
    memset(&img, 0, sizeof(img));
    img.nb_comps = 3;
    img.width = 640;
    img.height = 360;
    for (int k = 0; k < 3; k++) {
        img.depth[k] = 12;
        img.dx[k] = img.dy[k] = 1;
    }
    *enc = NULL;
    if (!p)
        return J2KC_ERR_NOMEM;
    j2kc_params_set_log(p, log_cb, l, level);
    ret = j2kc_params_set(p, "backend", backend);
    if (ret == 0)
        ret = j2kc_params_set(p, "bytes", bytes);
    if (ret == 0)
        ret = j2kc_params_set(p, "async_depth", "3");
    if (ret == 0)
        ret = j2kc_encoder_create(enc, &img, p);
    j2kc_params_free(&p);
    return ret;
}

int main(void)
{
    const char *backend = getenv("J2KC_TEST_BACKEND") ? getenv("J2KC_TEST_BACKEND") : "auto";
    J2kcEncoder *enc;
    Lines l;
    int ret;

    /* no randomness: fixed parameters; the seed line keeps the house format */
    test_seed("startup_log", 26);

    ret = create(backend, J2KC_LOG_VERBOSE, "40000", &l, &enc);
    CHECK(ret == 0 || !strcmp(backend, "cuda"), "creation (backend %s): %s", backend, j2kc_strerror(ret));
    if (ret == 0) {
        CHECK(l.nb_created == 1, "%d \"encoder created in\" lines", l.nb_created);
        CHECK(l.plan >= 0.0 && l.backend >= 0.0 && l.plan + l.backend <= l.total + 0.2,
              "steps %.1f + %.1f ms against %.1f in all", l.plan, l.backend, l.total);
        CHECK(!strcmp(l.backend_name, j2kc_encoder_backend(enc)), "the line names backend \"%s\", the encoder "
              "runs on \"%s\"", l.backend_name, j2kc_encoder_backend(enc));
        if (!strcmp(j2kc_encoder_backend(enc), "cuda"))
            CHECK(l.nb_cuda == 1 && strstr(l.cuda_line, "host tables") &&
                  strstr(l.cuda_line, "the slots' fit check"), "the CUDA backend's steps: \"%s\"", l.cuda_line);
        printf("# %s backend: created in %.1f ms (parameters and plan %.1f, backend %.1f)\n",
               j2kc_encoder_backend(enc), l.total, l.plan, l.backend);
    }
    j2kc_encoder_free(&enc);

    /* below the verbose level: no step line */
    ret = create(backend, J2KC_LOG_INFO, "40000", &l, &enc);
    CHECK(l.nb_created == 0 && l.nb_cuda == 0, "%d step lines at J2KC_LOG_INFO", l.nb_created + l.nb_cuda);
    j2kc_encoder_free(&enc);

    /* a creation that fails after the plan (a budget below the main header) logs no step line */
    ret = create(backend, J2KC_LOG_VERBOSE, "20", &l, &enc);
    CHECK(ret == J2KC_ERR_BUFSIZE && !enc, "a 20-byte budget: %s", j2kc_strerror(ret));
    CHECK(l.nb_created == 0, "%d step lines for a failed creation", l.nb_created);

    /* backend=cuda over and over: each creation joins its context thread, whatever the outcome */
    {
        int first = create("cuda", J2KC_LOG_ERROR, "40000", &l, &enc), same = 1;
        j2kc_encoder_free(&enc);
        for (int i = 0; i < 20; i++) {
            ret = create("cuda", J2KC_LOG_ERROR, "40000", &l, &enc);
            same &= ret == first && (ret == 0) == (enc != NULL);
            j2kc_encoder_free(&enc);
        }
        CHECK(same, "20 creations with backend=cuda did not all end like the first (%s)", j2kc_strerror(first));
        printf("# backend=cuda: %s\n", first == 0 ? "created" : j2kc_strerror(first));
    }
    return test_done("startup_log");
}
