"""Stand-ins for SpareNet's runners.misc.AverageMeter and runners.base_runner.BaseRunner."""
