"""``cryptoffload dask``: what a user needs to run the project's Dask work on a real cluster."""

from __future__ import annotations

from pathlib import Path

import typer

from cryptoffload.checks import VALIDITY_DAYS
from cryptoffload.cli.root import console, number_option

app = typer.Typer(help="Dask clusters: TLS credentials for a cluster of your own machines.", no_args_is_help=True)


@app.command("credentials")
def credentials_cmd(
    out: Path = typer.Option(..., "--out", help="New folder to write ca.pem, cert.pem and key.pem into (made 0700; "
                             "the files 0600; never overwritten)."),
    days: int = number_option(365, "--days", bound=VALIDITY_DAYS, help="Validity of the certificates, in days."),
) -> None:
    """Make the TLS credentials of one Dask cluster: a CA (its key discarded once it has signed)
    and the certificate and key every scheduler, worker and client of the cluster presents.
    Prints the folder and the commands that use it, never the key."""
    from cryptoffload.engines.dask_tls import write_credentials

    folder = write_credentials(out, days)
    tls = f"--tls-ca-file {folder}/ca.pem --tls-cert {folder}/cert.pem --tls-key {folder}/key.pem"
    console.print(f"wrote {folder}/ca.pem, cert.pem and key.pem (0600, in a 0700 folder; valid {days} days). "
                  "Copy the folder to every machine of the cluster (scp -rp), keep it private, then:", soft_wrap=True,
                  markup=False, highlight=False)
    for line in (f"DASK_DISTRIBUTED__SCHEDULER__HTTP__ROUTES=[] dask scheduler --protocol tls --no-dashboard {tls}",
                 f"DASK_DISTRIBUTED__WORKER__HTTP__ROUTES=[] dask worker tls://SCHEDULER-HOST:8786 --nthreads 1 "
                 f"--no-dashboard {tls}",
                 f"cryptoffload study ridge --scheduler tls://SCHEDULER-HOST:8786 --dask-credentials {folder}"):
        console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
