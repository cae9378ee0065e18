"""The five papers the studies reproduce, named the way a reader can find them.

Why one table: every user-facing string (CLI help, tables, the report, docs) names a paper by
its authors, title and venue, and they must all say the same thing. Titles of the Japanese,
Korean and Chinese originals are given in English translation with the original beside them.
Where the copy we have does not state the venue, ``venue`` says so rather than guess.

A venue named in Chinese also carries its name in Latin script (``venue_latin``, pinyin): the
report shows it beside the original, so a reader whose machine has no CJK font (the original
then renders as boxes) still reads it. Installing a font (``fonts-noto-cjk``) would also do, but
only on the machines where someone installs it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    key: str
    authors: str
    title: str
    original_title: str
    venue: str
    #: the venue in a few words, for :meth:`brief` (empty: ``venue`` as it is)
    venue_short: str = ""
    #: the venue's name as written in ``venue`` in CJK script (empty: none)
    venue_original: str = ""
    #: ``venue_original`` in Latin script, shown beside it in the report
    venue_latin: str = ""

    def cite(self) -> str:
        """``Authors, "Title", Venue`` -- the form used in tables, headlines and help."""
        return f'{self.authors}, "{self.title}", {self.venue}'

    def short(self) -> str:
        """``First author et al.`` for narrow places such as a table caption."""
        first = self.authors.split(",")[0].split(" and ")[0].strip()
        more = " et al." if ("," in self.authors or " and " in self.authors) else ""
        return f"{first}{more}"

    def brief(self) -> str:
        """``First author et al., short venue`` -- beside a study's title in ``study list``."""
        return f"{self.short()}, {self.venue_short or self.venue}"


PAPERS: dict[str, Paper] = {p.key: p for p in (
    Paper("in-storage-he",
          "T. Suzuki and H. Yamana (Waseda University)",
          "Applying in-storage computing to homomorphic encryption: toward faster CNN inference "
          "on encrypted data",
          "準同型暗号への In-Storage Computing 適用の検討",
          "Japanese workshop paper (venue not stated in our copy)", "Japanese workshop paper"),
    Paper("multi-device-bootstrapping",
          "W. R. Ha, H. Jung and Y. Paek (Seoul National University)",
          "Multi-device bootstrapping optimization for cloud computing",
          "클라우드 환경을 위한 멀티 디바이스 Bootstrapping 최적화",
          "Korean conference paper (venue not stated in our copy)", "Korean conference paper"),
    Paper("fpga-reconfiguration",
          "Y. Niwa, A. Maeda and Y. Yamaguchi (University of Tsukuba)",
          "A method of reducing reconfiguration overhead of an FPGA-based encryption "
          "communication system by predicting the use of encryption algorithm",
          "暗号通信におけるリクエスト予測を用いた FPGA 再構成オーバーヘッドの低減手法",
          "IPSJ Transactions on Advanced Computing Systems, 2005", "IPSJ TACS 2005"),
    Paper("qat-paillier",
          "H. Zhou and B. Hua (University of Science and Technology of China)",
          "Hardware offloading of homomorphic encryption and its application in "
          "privacy-preserving computing",
          "同态加密的硬件卸载及其在隐私保护计算中的应用",
          "Journal of Chinese Computer Systems (小型微型计算机系统), 2021, no. 3",
          "J. Chinese Computer Systems 2021", "小型微型计算机系统", "Xiaoxing Weixing Jisuanji Xitong"),
    Paper("smartnic-tls",
          "T. Miyakawa, Y. Li, T. Fukai, T. Hirofuchi and M. Sugaya (Shibaura Institute of "
          "Technology, AIST)",
          "Implementing the offload of encryption to a SmartNIC in multi-node edge computing",
          "マルチノードコンピューティング(MEC)における SmartNIC への暗号化処理のオフロードの実装",
          "Japanese conference paper (venue not stated in our copy)", "Japanese conference paper"),
)}
