#!/usr/bin/env python3
"""Face detection over a folder of images on Dask distributed, gathered into one JSON file.

    python3 examples/dask_detect.py photos/ -o faces.json                        # a LocalCluster of 2 workers
    python3 examples/dask_detect.py photos/ --workers 4 --threads 2 -o faces.json
    python3 examples/dask_detect.py photos/ --scheduler tcp://10.0.0.5:8786 -o faces.json   # a running cluster

Each worker process loads the face model once (when it joins, through a worker plugin) and keeps it for every
image it is given; the client lists the folder, hands out one task per image and writes the results, in the
folder's sorted order, as

    {"model": ..., "scheduler": ..., "workers": [{"address", "pid"}],
     "images": [{"image": path, "width", "height", "worker_pid", "faces": [{x1, y1, x2, y2, score, landmarks}]}]}

(an image that cannot be read gets an "error" instead of "faces"). Coordinates are in the image's pixels;
landmarks are five (x, y) pairs: eyes, nose tip, mouth corners.

Needs Debian's python3-distributed (scripts/install_deps.sh installs it), Pillow (python3-pil) and ninegrid
importable by the client and by every worker: `pip install .`, or PYTHONPATH=build/python from a source
build. On a real cluster the workers read the images from the same path, so the folder must be on a shared
file system; --ship-images sends each image's bytes with its task instead.
"""
import argparse
import io
import json
import os
import socket
import sys

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".tga", ".gif", ".ppm", ".pgm", ".tif", ".tiff", ".webp")


def detector_settings(args):
    """What every worker needs to build the same detector, as plain data (it travels to the workers)."""
    import ninegrid
    model = os.path.abspath(args.model) if args.model else ninegrid.default_face_model()
    return {"model": model, "score": args.score, "nms": args.nms, "size": args.size, "threads": args.threads}


def load_rgb(source):
    """An image file (path or bytes) as an HxWx3 uint8 RGB array."""
    import numpy as np
    from PIL import Image
    with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source) as im:
        return np.asarray(im.convert("RGB"))


def detect_one(name, source, settings):
    """Runs on a worker: the faces in one image. ninegrid.detect keeps one detector per process and setting, so
    the model the plugin loaded serves every task of this worker."""
    import ninegrid
    result = {"image": name, "worker_pid": os.getpid(), "worker_host": socket.gethostname()}
    try:
        rgb = load_rgb(source)
    except Exception as e:  # an unreadable file is reported in the results, not a failed job
        result["error"] = f"cannot read the image: {e}"
        return result
    result["height"], result["width"] = int(rgb.shape[0]), int(rgb.shape[1])
    faces = ninegrid.detect(rgb, model=settings["model"], score=settings["score"], nms=settings["nms"],
                            size=settings["size"], threads=settings["threads"])
    result["faces"] = [{k: (float(v) if k != "landmarks" else [[float(x), float(y)] for x, y in v])
                        for k, v in f.items()} for f in faces]
    return result


def load_model_once(settings):
    """Loads the detector into this process (a tiny image: ninegrid.detect builds and caches it), so that a
    bad model fails when the worker starts, and no task pays for loading."""
    import numpy as np
    import ninegrid
    ninegrid.detect(np.zeros((32, 32, 3), np.uint8), model=settings["model"], score=settings["score"],
                    nms=settings["nms"], size=settings["size"], threads=settings["threads"])
    return os.getpid()


def make_plugin(settings):
    from distributed.diagnostics.plugin import WorkerPlugin

    class LoadFaceModel(WorkerPlugin):
        name = "ninegrid-face-model"

        def setup(self, worker):
            load_model_once(settings)

    return LoadFaceModel()


def list_images(folder):
    if not os.path.isdir(folder):
        raise SystemExit(f"dask_detect: error: {folder} is not a directory")
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith(IMAGE_EXTENSIONS))
    return [os.path.abspath(os.path.join(folder, n)) for n in names]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("folder", help="the images (files ending in " + ", ".join(IMAGE_EXTENSIONS) + "; not recursive)")
    p.add_argument("-o", "--output", default="faces.json", help="the JSON file to write (default: faces.json)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://host:8786); default: start a LocalCluster")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster: worker processes (default: 2)")
    p.add_argument("--threads", type=int, default=1,
                   help="threads per worker, used by the engine for each image (default: 1)")
    p.add_argument("--model", help="face detector (ONNX or ncnn .param; default: ninegrid's BlazeFace)")
    p.add_argument("--score", type=float, default=0.5, help="minimum face score (default: 0.5)")
    p.add_argument("--nms", type=float, default=0.4, help="IoU above which boxes are merged (default: 0.4)")
    p.add_argument("--size", type=int, default=640, help="input side for RetinaFace models (default: 640)")
    p.add_argument("--ship-images", action="store_true",
                   help="send each image's bytes with its task (for workers without the folder)")
    args = p.parse_args(argv)
    if args.workers < 1 or args.threads < 1:
        p.error("--workers and --threads must be at least 1")

    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as e:
        raise SystemExit(f"dask_detect: error: Dask distributed is not installed ({e}); on Debian: "
                         "apt-get install python3-distributed")
    settings = detector_settings(args)
    if not os.path.exists(settings["model"]):
        raise SystemExit(f"dask_detect: error: face model {settings['model']} not found (pass --model)")
    images = list_images(args.folder)

    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        # One single-threaded process per worker: each holds one model; the engine's threads do the rest.
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        # The plugin runs on every worker that is there now or joins later: one model per worker process.
        client.register_worker_plugin(make_plugin(settings))
        workers = client.run(os.getpid)  # {address: pid}
        print(f"dask_detect: {len(images)} images on {len(workers)} workers ({client.scheduler.address})",
              file=sys.stderr)
        sources = images
        if args.ship_images:
            sources = []
            for path in images:
                with open(path, "rb") as f:
                    sources.append(f.read())
        futures = client.map(detect_one, images, sources, settings=settings, pure=False)
        order = {f.key: i for i, f in enumerate(futures)}
        results = [None] * len(images)
        for future in as_completed(futures):
            r = future.result()
            results[order[future.key]] = r
            status = r.get("error") or f"{len(r['faces'])} face(s)"
            print(f"  {os.path.basename(r['image'])}: {status} (worker pid {r['worker_pid']})", file=sys.stderr)
        report = {"model": settings["model"], "scheduler": client.scheduler.address,
                  "workers": [{"address": a, "pid": pid} for a, pid in sorted(workers.items())],
                  "images": results}
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    with open(args.output, "w") as f:
        json.dump(report, f, indent=1)
    print(f"dask_detect: wrote {args.output}", file=sys.stderr)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":  # required: LocalCluster starts its workers by spawning this interpreter
    sys.exit(main())
