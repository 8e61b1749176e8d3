# jobquake/app: Python with the harness's dependencies, the harness and refapp.
# Workers and app processes of the docker backend run in it; the backend also mounts the
# repository read-only at its own path and puts it first on PYTHONPATH, so a run always uses
# the code on disk and this image only needs rebuilding when dependencies change.
# Build context: the repository root (see .dockerignore there).
ARG BASE=jobquake/base
FROM ${BASE}
COPY compose/requirements-app.txt /tmp/requirements-app.txt
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check -r /tmp/requirements-app.txt
ENV PATH=/opt/venv/bin:$PATH
COPY pyproject.toml README.md /opt/jobquake/
COPY harness /opt/jobquake/harness
COPY refapp /opt/jobquake/refapp
# installs the harness only (the wheel holds no refapp): refapp is imported from the working directory
RUN pip install --no-cache-dir --no-deps --disable-pip-version-check /opt/jobquake
WORKDIR /opt/jobquake
CMD ["python", "-m", "celery", "-A", "refapp.celery_app", "worker", "--pool", "prefork", "--loglevel", "INFO"]
