// SPDX-License-Identifier: MIT
// A stand-in for Polymarket's CTF Exchange V2 (and, deployed a second time, its neg-risk
// twin) on the local chain. The sandbox venue matches orders off chain, as the CLOB does,
// and its operator settles each trade here in one transaction, as the venue's operator
// calls matchOrders: the exchange pulls what each side gives (pUSD from buyers, outcome
// tokens from sellers; both approved to this exchange, as the venue requires), splits a
// full set where two buyers of complementary outcomes met (a mint) or merges one where two
// sellers did (a merge), pays out, and emits the V2 exchange's OrderFilled and
// OrdersMatched events (ctf-exchange-v2 ITrading), so an on-chain detector reads the same
// logs as on Polygon. Signatures are not checked here: the venue checked them at order entry.
pragma solidity ^0.8.24;

import {DevToken} from "./DevToken.sol";
import {ConditionalTokens} from "./ConditionalTokens.sol";
import {NegRiskAdapter} from "./NegRiskAdapter.sol";

contract CTFExchange {
    enum Side {
        BUY,
        SELL
    }

    /// One movement between an account and the exchange: tokenId 0 is pUSD.
    struct Leg {
        address account;
        uint256 tokenId;
        uint256 amount;
    }

    /// What the trade does on the CTF: the market's condition, the collateral its outcome
    /// tokens are made of (pUSD, USDC.e, or the neg-risk adapter's wrapped collateral), and
    /// how many full sets are split (mint) and merged.
    struct Match {
        bytes32 conditionId;
        address positionCollateral;
        uint256 mint;
        uint256 merge;
    }

    /// An OrderFilled event's fields (ctf-exchange-v2 ITrading).
    struct Filled {
        bytes32 orderHash;
        address maker;
        address taker;
        Side side;
        uint256 tokenId;
        uint256 makerAmountFilled;
        uint256 takerAmountFilled;
        uint256 fee;
        bytes32 builder;
        bytes32 metadata;
    }

    event OrderFilled(
        bytes32 indexed orderHash,
        address indexed maker,
        address indexed taker,
        Side side,
        uint256 tokenId,
        uint256 makerAmountFilled,
        uint256 takerAmountFilled,
        uint256 fee,
        bytes32 builder,
        bytes32 metadata
    );
    event OrdersMatched(
        bytes32 indexed takerOrderHash,
        address indexed takerOrderMaker,
        Side side,
        uint256 tokenId,
        uint256 makerAmountFilled,
        uint256 takerAmountFilled
    );
    event NewOperator(address indexed newOperatorAddress, address indexed admin);

    ConditionalTokens public immutable ctf;
    DevToken public immutable collateral;
    DevToken public immutable usdce;
    NegRiskAdapter public immutable negRiskAdapter;
    address public immutable admin;
    mapping(address => bool) public isOperator;

    constructor(address ctf_, address collateral_, address usdce_, address negRiskAdapter_) {
        ctf = ConditionalTokens(ctf_);
        collateral = DevToken(collateral_);
        usdce = DevToken(usdce_);
        negRiskAdapter = NegRiskAdapter(negRiskAdapter_);
        admin = msg.sender;
        isOperator[msg.sender] = true;
        DevToken(collateral_).approve(ctf_, type(uint256).max);
        DevToken(usdce_).approve(ctf_, type(uint256).max);
        DevToken(usdce_).approve(negRiskAdapter_, type(uint256).max);
        ConditionalTokens(ctf_).setApprovalForAll(negRiskAdapter_, true);
    }

    modifier onlyOperator() {
        require(isOperator[msg.sender], "CTFExchange: not operator");
        _;
    }

    function addOperator(address operator) external {
        require(msg.sender == admin, "CTFExchange: not admin");
        isOperator[operator] = true;
        emit NewOperator(operator, msg.sender);
    }

    /// Settle one matched trade: pull, split or merge, pay out, then emit each maker's
    /// OrderFilled, the taker's OrderFilled and OrdersMatched.
    function settleMatch(
        Match calldata m,
        Leg[] calldata pulls,
        Leg[] calldata pushes,
        Filled[] calldata makerFills,
        Filled calldata takerFill
    ) external onlyOperator {
        for (uint256 i = 0; i < pulls.length; i++) {
            _move(pulls[i].account, address(this), pulls[i].tokenId, pulls[i].amount);
        }
        if (m.mint > 0) _split(m, m.mint);
        if (m.merge > 0) _merge(m, m.merge);
        for (uint256 i = 0; i < pushes.length; i++) {
            _move(address(this), pushes[i].account, pushes[i].tokenId, pushes[i].amount);
        }
        for (uint256 i = 0; i < makerFills.length; i++) {
            _emitFilled(makerFills[i]);
        }
        _emitFilled(takerFill);
        emit OrdersMatched(
            takerFill.orderHash,
            takerFill.maker,
            takerFill.side,
            takerFill.tokenId,
            takerFill.makerAmountFilled,
            takerFill.takerAmountFilled
        );
    }

    /// Sandbox only: give an account `pusd` new pUSD and `amount` of outcome token `tokenId`
    /// (split from new pUSD; the exchange keeps the complement). The venue's faucet, and how
    /// its keyless accounts (the house, scripted whales) come to hold what its ledger says.
    function provision(Match calldata m, address to, uint256 pusd, uint256 tokenId, uint256 amount)
        external
        onlyOperator
    {
        if (pusd > 0) collateral.mint(to, pusd);
        if (amount > 0) {
            collateral.mint(address(this), amount);
            _split(m, amount);
            ctf.safeTransferFrom(address(this), to, tokenId, amount, "");
        }
    }

    function _emitFilled(Filled calldata f) private {
        emit OrderFilled(
            f.orderHash,
            f.maker,
            f.taker,
            f.side,
            f.tokenId,
            f.makerAmountFilled,
            f.takerAmountFilled,
            f.fee,
            f.builder,
            f.metadata
        );
    }

    function _move(address from, address to, uint256 tokenId, uint256 amount) private {
        if (amount == 0) return;
        if (tokenId == 0) {
            if (from == address(this)) {
                require(collateral.transfer(to, amount), "CTFExchange: pUSD transfer failed");
            } else {
                require(collateral.transferFrom(from, to, amount), "CTFExchange: pUSD transfer failed");
            }
        } else {
            ctf.safeTransferFrom(from, to, tokenId, amount, "");
        }
    }

    function _partition() private pure returns (uint256[] memory partition) {
        partition = new uint256[](2);
        partition[0] = 1;
        partition[1] = 2;
    }

    // pUSD <-> USDC.e one for one: the V2 collateral adapters' job, done here by minting
    // (this exchange is a minter of both dev tokens)
    function _toUsdce(uint256 amount) private {
        collateral.burn(address(this), amount);
        usdce.mint(address(this), amount);
    }

    function _toCollateral(uint256 amount) private {
        usdce.burn(address(this), amount);
        collateral.mint(address(this), amount);
    }

    function _split(Match calldata m, uint256 amount) private {
        if (m.positionCollateral == address(collateral)) {
            ctf.splitPosition(address(collateral), bytes32(0), m.conditionId, _partition(), amount);
        } else if (m.positionCollateral == address(usdce)) {
            _toUsdce(amount);
            ctf.splitPosition(address(usdce), bytes32(0), m.conditionId, _partition(), amount);
        } else if (address(negRiskAdapter) != address(0) && m.positionCollateral == address(negRiskAdapter.wcol())) {
            _toUsdce(amount);
            negRiskAdapter.splitPosition(m.conditionId, amount);
        } else {
            revert("CTFExchange: unsupported position collateral");
        }
    }

    function _merge(Match calldata m, uint256 amount) private {
        if (m.positionCollateral == address(collateral)) {
            ctf.mergePositions(address(collateral), bytes32(0), m.conditionId, _partition(), amount);
        } else if (m.positionCollateral == address(usdce)) {
            ctf.mergePositions(address(usdce), bytes32(0), m.conditionId, _partition(), amount);
            _toCollateral(amount);
        } else if (address(negRiskAdapter) != address(0) && m.positionCollateral == address(negRiskAdapter.wcol())) {
            negRiskAdapter.mergePositions(m.conditionId, amount);
            _toCollateral(amount);
        } else {
            revert("CTFExchange: unsupported position collateral");
        }
    }

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external view returns (bytes4) {
        require(msg.sender == address(ctf), "CTFExchange: only CTF tokens");
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        view
        returns (bytes4)
    {
        require(msg.sender == address(ctf), "CTFExchange: only CTF tokens");
        return this.onERC1155BatchReceived.selector;
    }
}
